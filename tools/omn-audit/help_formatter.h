// The --help layout of every command (the CLI's own and the plugins'): CLI11's, with two fixes.
// An option that is both a positional and a flag ("checkpoint,--checkpoint") is listed twice by
// CLI11, REQUIRED each time, as if both were needed: under Options it now says it is the
// positional by name, not required. A positional taking one or two values ("report a.json
// b.json") was shown as "inputs(1x)": the usage line now repeats the name, the optional ones in
// brackets ("inputs [inputs]").
#pragma once
#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

namespace omn::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    if (is_positional || !opt->get_positional()) return CLI::Formatter::make_option(opt, is_positional);
    std::stringstream out;
    CLI::detail::format_help(out, make_option_name(opt, false) + " " + get_label(opt->get_type_name()),
                             "the positional " + opt->get_name(true, false) + ", given by name instead", get_column_width());
    return out.str();
  }

  std::string make_option_usage(const CLI::Option* opt) const override {
    const int lo = opt->get_expected_min(), hi = opt->get_expected_max();
    if (hi >= CLI::detail::expected_max_vector_size || hi <= 1 || hi > 4) return CLI::Formatter::make_option_usage(opt);
    const std::string name = make_option_name(opt, true);
    std::string out;
    for (int k = 0; k < hi; ++k) {
      const bool optional = k >= lo || !opt->get_required();
      out += std::string(k ? " " : "") + (optional ? "[" + name + "]" : name);
    }
    return out;
  }
};

}  // namespace omn::cli
