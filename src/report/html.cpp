// The review report, assembled: the warnings, the summary, the figures, each document's sections,
// the provenance of each, and the manifest a result ran as read. From the documents' structs alone.
#include "omn/report/html.h"

#include <sstream>

#include "omn/documents/document.h"
#include "omn/io/terminal_text.h"
#include "omn/report/svg.h"
#include "grid.h"
#include "run_sections.h"
#include "sections.h"

namespace omn::report {

namespace {

// A manifest's bytes in a fenced block: its lines and tabs kept (CRLF read as a line break), every
// other control character escaped (a lone CR too), and a fence longer than any run of backticks in it.
std::string markdownCodeBlock(const std::string& text) {
  std::string body, piece;
  std::size_t run = 0, longest = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) continue;  // CRLF, or a last line's CR
    if (c == '\n' || c == '\t') {
      body += io::terminalSafe(piece) + c;
      piece.clear();
    } else {
      piece += c;
    }
  }
  body += io::terminalSafe(piece);
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + "json\n" + body + "\n" + fence + "\n";
}

// The findings a reader looks for first, one row each, from the documents alone: for a sweep the
// control and how many conditions the paired interval resolves, the largest and the smallest
// change; for a study each arm's best LR and loss; for a profile the gains' range.
Grid summaryGrid(const ReportInput& in) {
  Grid g{{"finding", "value"}, {}};
  if (in.sweep) sweepSummaryRows(g, *in.sweep);
  if (in.study) studySummaryRows(g, *in.study);
  if (in.eval) evalSummaryRows(g, *in.eval);
  if (in.track) trackSummaryRows(g, *in.track);
  if (in.run) runSummaryRows(g, *in.run);
  if (in.profile) profileSummaryRows(g, *in.profile);
  return g;
}

// The provenance of every document in the report, under its schema id: the result, the track, the
// run, the profile.
std::vector<std::pair<std::string, Grid>> provenanceSections(const ReportInput& in) {
  using documents::DocumentKind;
  using documents::schemaId;
  std::vector<std::pair<std::string, Grid>> out;
  if (in.sweep)
    out.emplace_back(schemaId(DocumentKind::intervention),
                     provenanceGrid(in.sweep->provenance, in.sweep->tokens, in.sweep->model, in.sweep->selection));
  if (in.eval)
    out.emplace_back(schemaId(DocumentKind::eval), provenanceGrid(in.eval->provenance, in.eval->tokens, in.eval->model, in.eval->selection));
  if (in.study) out.emplace_back(schemaId(DocumentKind::study), provenanceGrid(in.study->provenance));
  if (in.track) out.emplace_back(schemaId(DocumentKind::track), provenanceGrid(in.track->provenance));
  if (in.run) out.emplace_back(schemaId(DocumentKind::train), provenanceGrid(in.run->provenance));
  if (in.profile) out.emplace_back(schemaId(DocumentKind::profile), provenanceGrid(in.profile->provenance));
  return out;
}

// The manifest a result ran, exactly as the run read it: a sweep records its bytes, a study its
// text; a sweep from before either was recorded falls back to the parsed document (and says so).
struct ManifestShown {
  std::string sha256, text;
};
std::optional<ManifestShown> manifestOf(const ReportInput& in) {
  if (in.study) return ManifestShown{in.study->manifest.sha256, in.study->manifest.verbatim};
  if (!in.sweep) return std::nullopt;
  const documents::SweepManifest& m = in.sweep->manifest;
  const std::optional<std::string> read = m.asRead();
  return ManifestShown{m.sha256, read ? *read : "(the result does not record the manifest's bytes; its parsed form:)\n" + m.parsedText()};
}

const char* kCss =
    "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px}"
    "th{background:#f0f0f0}td{text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:8px 12px;margin:6px 0}"
    ".ok{background:#e8f5e9;border:1px solid #9c9;padding:8px 12px;margin:6px 0}"
    "figure{margin:16px 0}figcaption{font-size:12px;color:#555;max-width:760px}"
    "figure svg{max-width:100%;height:auto}nav{font-size:13px;margin:8px 0}nav a{margin-right:12px}"
    "table{display:block;overflow-x:auto;max-width:100%}"
    "pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;font-size:11px;white-space:pre-wrap;overflow-wrap:anywhere}";


// The result's own sections (a sweep's table and reported values, a study's arms, an eval's groups)
// under their headings; `html`: HTML, else Markdown.
std::string resultSections(const ReportInput& in, bool html) {
  std::ostringstream o;
  auto heading = [&](int level, const std::string& id, const std::string& text) {
    if (html) o << "<h" << level << (id.empty() ? "" : " id=\"" + id + "\"") << ">" << text << "</h" << level << ">\n";
    else o << std::string(static_cast<std::size_t>(level), '#') << " " << text << "\n\n";
  };
  auto grid = [&](const Grid& g) { o << (html ? g.html() : g.markdown() + "\n"); };
  if (in.sweep) {
    heading(2, "sweep", "Sweep");
    grid(sweepGrid(*in.sweep));
    if (hasReported(*in.sweep)) {
      heading(2, "", "Reported against measured");
      if (html) o << "<p>" << xmlEscape(reportedNote(*in.sweep)) << "</p>\n";
      else o << markdownText(reportedNote(*in.sweep)) << "\n\n";
      grid(reportedGrid(*in.sweep));
    }
  } else if (in.study) {
    heading(2, "study", "Study: arms");
    grid(studyArmsGrid(*in.study));
    heading(2, "", "Study: QK-norm on − off, paired by seed");
    grid(studyComparisonGrid(*in.study));
  } else if (in.eval) {
    heading(2, "evaluation", "Evaluation");
    const documents::Scores& r = in.eval->result;
    if (html)
      o << "<p>perplexity " << f(r.perplexity, 4) << " " << ciCell(r.perplexity_ci, 4) << " over " << r.tokens << " tokens</p>\n";
    grid(evalGrid(*in.eval));
  }
  return o.str();
}

}  // namespace

const documents::Provenance* resultProvenance(const ReportInput& in) {
  return in.sweep ? &in.sweep->provenance : in.eval ? &in.eval->provenance : in.study ? &in.study->provenance : nullptr;
}

std::vector<Figure> reportFigures(const ReportInput& in) {
  std::vector<Figure> figs;
  auto add = [&](std::vector<Figure> more) {
    for (auto& f : more) figs.push_back(std::move(f));
  };
  if (in.sweep) add(sweepFigures(*in.sweep));
  if (in.study) add(studyFigures(*in.study));
  if (in.track) add(trackFigures(*in.track));
  if (in.run) add(runFigures(*in.run, in.run_log));
  if (in.profile) add(profileFigures(*in.profile));
  return figs;
}

std::string htmlReport(const ReportInput& in) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>omn-audit report</title><style>"
    << kCss << "</style></head><body>\n<h1>omn-audit report</h1>\n";
  o << "<nav><a href=\"#summary\">Summary</a><a href=\"#figures\">Figures</a>"
    << (in.sweep ? "<a href=\"#sweep\">Sweep</a>" : in.study ? "<a href=\"#study\">Study</a>" : in.eval ? "<a href=\"#evaluation\">Evaluation</a>" : "")
    << (in.track ? "<a href=\"#track\">Track</a>" : "") << (in.run ? "<a href=\"#run\">Training run</a>" : "")
    << (in.profile ? "<a href=\"#profile\">Profile</a>" : "") << "<a href=\"#provenance\">Provenance</a></nav>\n";
  const auto warnings = reportWarnings(in);
  if (warnings.empty()) o << "<div class=\"ok\">No warnings: inputs verified, controls reproduced, restores bitwise.</div>\n";
  for (const auto& w : warnings) o << "<div class=\"warn\">⚠ " << xmlEscape(w) << "</div>\n";
  o << "<h2 id=\"summary\">Summary</h2>\n" << summaryGrid(in).html();
  o << "<h2 id=\"figures\">Figures</h2>\n";
  for (const auto& f : reportFigures(in))
    o << "<figure>" << f.svg << "</figure>\n";  // the caption is inside the SVG: it travels with the figure
  o << resultSections(in, true);
  if (in.track) o << "<h2 id=\"track\">Track: Q/K gains over checkpoints</h2>\n" << trackGrid(*in.track).html();
  if (in.run)
    o << "<h2 id=\"run\">Training run</h2>\n" << runGrid(*in.run).html() << "<h3>Held-out evaluations</h3>\n" << runEvalsGrid(*in.run).html();
  if (in.profile) o << "<h2 id=\"profile\">Q/K gain profile</h2>\n" << profileSummary(*in.profile).html() << profileLayers(*in.profile).html();
  o << "<h2 id=\"provenance\">Provenance</h2>\n";
  for (const auto& [schema, grid] : provenanceSections(in)) o << "<h3>" << xmlEscape(schema) << "</h3>\n" << grid.html();
  if (const auto m = manifestOf(in))
    o << "<h3>Manifest (verbatim, sha256 " << xmlEscape(m->sha256) << ")</h3>\n<pre>" << xmlEscape(m->text) << "</pre>\n";
  o << "</body></html>\n";
  return o.str();
}

std::string markdownReport(const ReportInput& in, const std::string& figure_dir) {
  std::ostringstream o;
  o << "# omn-audit report\n\n";
  const auto warnings = reportWarnings(in);
  if (warnings.empty()) o << "No warnings: inputs verified, controls reproduced, restores bitwise.\n\n";
  for (const auto& w : warnings) o << "> **Warning:** " << markdownText(w) << "\n\n";
  o << "## Summary\n\n" << summaryGrid(in).markdown() << "\n";
  o << "## Figures\n\n";
  for (const auto& f : reportFigures(in))
    o << "![" << markdownText(f.title) << "](" << markdownText(figure_dir) << "/" << f.name << ")\n\n*" << markdownText(f.caption) << "*\n\n";
  o << resultSections(in, false);
  if (in.track) o << "## Track: Q/K gains over checkpoints\n\n" << trackGrid(*in.track).markdown() << "\n";
  if (in.run)
    o << "## Training run\n\n" << runGrid(*in.run).markdown() << "\n### Held-out evaluations\n\n" << runEvalsGrid(*in.run).markdown() << "\n";
  if (in.profile)
    o << "## Q/K gain profile\n\n" << profileSummary(*in.profile).markdown() << "\n" << profileLayers(*in.profile).markdown() << "\n";
  o << "## Provenance\n\n";
  for (const auto& [schema, grid] : provenanceSections(in)) o << "### " << markdownText(schema) << "\n\n" << grid.markdown() << "\n";
  if (const auto m = manifestOf(in))
    o << "### Manifest (sha256 " << markdownText(m->sha256) << ")\n\n" << markdownCodeBlock(m->text);
  return o.str();
}

}  // namespace omn::report
