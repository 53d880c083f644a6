// omn_core is the torch-free core (docs/ARCHITECTURE.md): this file sits first on its include path
// so that a libtorch header reached from a core source stops the build here. A source that needs
// libtorch belongs in OMN_TORCH_SOURCES (CMakeLists.txt); a header the core needs must not include
// a torch-side header (e.g. eval/session_spec.h, not eval/session.h).
#error "a libtorch header was included from omn_core, the torch-free core"
