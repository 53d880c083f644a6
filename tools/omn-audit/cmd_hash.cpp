// omn-audit hash FILE...: the bare SHA-256 digests, sha256sum-style.
#include <iostream>

#include "commands.h"
#include "omn/io/sha256.h"
#include "omn/output/progress.h"

namespace omn::cli {

Command addHashCommand(CLI::App& root) {
  auto* app = root.add_subcommand("hash", "print the SHA-256 of files (as sha256sum does)");
  auto files = std::make_shared<std::vector<std::string>>();
  app->add_option("files", *files, "files to hash")->required()->check(CLI::ExistingFile);
  return {app, [files] {
            for (const auto& f : *files) {
              std::unique_ptr<output::ProgressBar> bar;
              const std::string d = io::sha256File(f, [&](std::uint64_t done, std::uint64_t total) {
                if (!bar)
                  bar = std::make_unique<output::ProgressBar>("sha256", total,
                                                              output::ProgressBar::stderrIsTerminal() && total >= (256u << 20));
                bar->update(done);
              });
              if (bar) bar->finish();
              std::cout << d << "  " << f << "\n";
            }
            return 0;
          }};
}

}  // namespace omn::cli
