#include "apps/convergence_report.h"

#include "apps/common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace weft {

namespace {

/// The q-quantile (0..1) of `values` by linear interpolation between order statistics.
double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double at = q * double(values.size() - 1);
  const size_t i = size_t(at);
  const double f = at - double(i);
  return i + 1 < values.size() ? values[i] * (1.0 - f) + values[i + 1] * f : values[i];
}

std::string number(double value) {
  return formatFixed(value, 1);
}

}  // namespace

ConvergenceSummary summarizeConvergence(const RigidPart::ConvergenceReport& report) {
  ConvergenceSummary out;
  const size_t n = size_t(report.iterations);
  if (n == 0) return out;
  out.substeps = static_cast<long long>(report.translation.size() / n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> t, r;
    for (size_t k = i; k < report.translation.size(); k += n) {
      t.push_back(report.translation[k]);
      r.push_back(report.rotation[k]);
    }
    out.medianTranslation.push_back(quantile(t, 0.5));
    out.lowTranslation.push_back(quantile(t, 0.1));
    out.highTranslation.push_back(quantile(t, 0.9));
    out.medianRotation.push_back(quantile(r, 0.5));
    out.lowRotation.push_back(quantile(r, 0.1));
    out.highRotation.push_back(quantile(r, 0.9));
  }
  return out;
}

std::string convergenceSvg(const std::string& title, const ConvergenceSummary& s) {
  const int width = 640, height = 380, left = 80, right = 24, top = 56, bottom = 52;
  const double plotW = width - left - right, plotH = height - top - bottom;
  const size_t n = s.medianTranslation.size();

  // Decades spanning every positive value (steps of exactly 0 sit on the floor).
  double lo = HUGE_VAL, hi = 0.0;
  for (const auto* series : {&s.lowTranslation, &s.highTranslation, &s.lowRotation, &s.highRotation,
                             &s.medianTranslation, &s.medianRotation})
    for (double v : *series)
      if (v > 0.0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (!(hi > 0.0)) lo = hi = 1.0;
  const double decadeLo = std::floor(std::log10(lo)),
               decadeHi = std::max(std::ceil(std::log10(hi)), decadeLo + 1);
  auto x = [&](size_t i) {
    return n > 1 ? left + plotW * double(i) / double(n - 1) : left + plotW / 2;
  };
  auto y = [&](double v) {
    const double l = v > 0.0 ? std::log10(v) : decadeLo;
    return top + plotH * (decadeHi - std::max(l, decadeLo)) / (decadeHi - decadeLo);
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"10\" y=\"20\" font-size=\"14\">" << title << "</text>\n";
  svg << "<text x=\"10\" y=\"38\">largest body step per iteration over " << s.substeps
      << " substeps: median (line), 10th-90th percentile (band)</text>\n";
  for (double d = decadeLo; d <= decadeHi; d += 1.0) {
    const double yy = y(std::pow(10.0, d));
    svg << "<line x1=\"" << left << "\" y1=\"" << number(yy) << "\" x2=\"" << width - right
        << "\" y2=\"" << number(yy) << "\" stroke=\"#ddd\"/>\n";
    svg << "<text x=\"" << left - 6 << "\" y=\"" << number(yy + 4) << "\" text-anchor=\"end\">1e"
        << int(d) << "</text>\n";
  }
  for (size_t i = 0; i < n; ++i)
    svg << "<text x=\"" << number(x(i)) << "\" y=\"" << height - bottom + 16
        << "\" text-anchor=\"middle\">" << i + 1 << "</text>\n";
  svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << height - 12
      << "\" text-anchor=\"middle\">iteration (Gauss-Seidel sweep over the body colors)</text>\n";

  struct Series {
    const std::vector<double>&median, &low, &high;
    const char* color;
    const char* label;
  };
  const Series series[] = {
      {s.medianTranslation, s.lowTranslation, s.highTranslation, "#4e79a7",
       "largest |dx| of a body [m]"},
      {s.medianRotation, s.lowRotation, s.highRotation, "#e15759",
       "largest |dtheta| of a body [rad]"},
  };
  int legend = 0;
  for (const Series& line : series) {
    if (n == 0) break;
    svg << "<polygon fill=\"" << line.color << "\" fill-opacity=\"0.18\" stroke=\"none\" points=\"";
    for (size_t i = 0; i < n; ++i) svg << number(x(i)) << "," << number(y(line.high[i])) << " ";
    for (size_t i = n; i-- > 0;) svg << number(x(i)) << "," << number(y(line.low[i])) << " ";
    svg << "\"/>\n<polyline fill=\"none\" stroke=\"" << line.color
        << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < n; ++i) svg << number(x(i)) << "," << number(y(line.median[i])) << " ";
    svg << "\"/>\n";
    for (size_t i = 0; i < n; ++i)
      svg << "<circle cx=\"" << number(x(i)) << "\" cy=\"" << number(y(line.median[i]))
          << "\" r=\"3\" fill=\"" << line.color << "\"/>\n";
    const int ly = top + 8 + 16 * legend++;
    svg << "<rect x=\"" << width - right - 210 << "\" y=\"" << ly - 9
        << "\" width=\"10\" height=\"10\" fill=\"" << line.color << "\"/>\n";
    svg << "<text x=\"" << width - right - 195 << "\" y=\"" << ly << "\">" << line.label
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace weft
