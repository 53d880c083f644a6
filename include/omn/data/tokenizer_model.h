// The trained SentencePiece model as the corpus writes it: the same bytes for the same corpus on
// any machine. SentencePiece records its trainer's settings in the model (ModelProto.trainer_spec),
// num_threads among them, so a 1-thread and a 2-thread build of one corpus differed in one byte and
// so in their "tokenizer revision". The thread count changes nothing else (tested), so it is
// dropped from the record; a reader sees the field's default. Protobuf wire format, edited
// directly: Debian's libsentencepiece ships no generated message headers. No libtorch.
#pragma once
#include <string>

namespace omn::data {

// `model` (a serialized sentencepiece.ModelProto) without trainer_spec.num_threads (field 2,
// field 16). Throws FormatError when the bytes are not a well-formed message.
std::string withoutThreadCount(const std::string& model);

}  // namespace omn::data
