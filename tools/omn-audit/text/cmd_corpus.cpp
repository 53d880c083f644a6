// omn-audit corpus --config C --out DIR: text files -> tokenizer + train/held-out token streams.
#include <iostream>
#include <thread>

#include "../commands.h"
#include "../named_config.h"
#include "../plugin_commands.h"
#include "omn/data/corpus.h"
#include "omn/output/table.h"

namespace omn::cli {

Command addCorpusCommand(CLI::App& root) {
  auto* app = root.add_subcommand("corpus", pluginCommandHelp("corpus"));
  app->footer("Examples:\n"
              "  omn-audit corpus --config sotu -o data/sotu\n"
              "  omn-audit corpus --config sotu -o data/sotu --threads 1 --force");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto threads = std::make_shared<int>(0);
  app->add_option("--config", *config,
                  "corpus config (omn-audit/corpus-config@1): a file, or the name of one that ships with omn-audit (sotu: "
                  "configs/corpus/)")
      ->required();
  app->add_option("--out,-o,--output", *out, "output directory: corpus.json, tokenizer.model, train.bin, heldout.bin (-o/--output as in every command)")->required();
  app->add_option("--threads", *threads, "tokenizer-training threads (0: every CPU)")->check(CLI::Range(0, 1024));
  app->add_flag("--force", *force, "overwrite an existing corpus in --out");
  return {app, [=] {
            const data::CorpusConfig c = data::loadCorpusConfig(locateConfig(*config, "corpus", "--config").path);
            const int n = *threads > 0 ? *threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            const nlohmann::json doc = data::buildCorpus(c, *out, *force, n);
            output::Table t({"split", "documents", "tokens", "sha256"});
            for (const char* s : {"train", "heldout"})
              t.add({s, std::to_string(doc[s]["n_documents"].get<long long>()), std::to_string(doc[s]["n_tokens"].get<long long>()),
                     doc[s]["sha256"].get<std::string>()});
            t.print(std::cout);
            std::cout << "tokenizer  " << doc["tokenizer"]["model_type"].get<std::string>() << ", vocabulary "
                      << doc["tokenizer"]["vocab_size"] << ", sha256 " << doc["tokenizer"]["sha256"].get<std::string>()
                      << " (the tokenizer revision)\n";
            std::cout << "unigram    held-out cross-entropy " << output::fixed(doc["unigram"]["heldout_cross_entropy"], 4)
                      << " nats/token (a context-free model's loss)\n";
            std::cout << "wrote " << *out << "/corpus.json\n";
            return 0;
          }};
}

}  // namespace omn::cli
