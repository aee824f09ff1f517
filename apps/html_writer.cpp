// The HTML frame writer (`weft run --format html`): one self-contained page that plays the run in
// any browser, with three.js (r111, Debian's libjs-three, MIT) and the player apps/html_viewer.js
// embedded at build time (apps/embed_html_assets.cmake), so opening it needs no network.
//
// Frames are kept in memory (floats) and written by finish() after the run's checks are known
// (setRunReport): positions quantized to 16 bits over the box of every frame (the box's extent /
// 65535 per step: 15 µm for a 1 m scene), body orientations to 16-bit quaternion components,
// moving shapes' poses as floats; everything base64 in one block the player decodes.
#include "apps/html_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"

namespace weft {

#if defined(WEFT_HTML_VIEWER)
extern const char kThreeJs[];
extern const char kHtmlViewerJs[];
#endif

bool htmlViewerAvailable() {
#if defined(WEFT_HTML_VIEWER)
  return true;
#else
  return false;
#endif
}

void requireHtmlViewer() {
  if (!htmlViewerAvailable())
    throw Error(
        "--format html: this build has no HTML viewer (three.js was not found when it was "
        "configured: apt-get install libjs-three, then configure again)");
}

namespace {

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t a = bytes[i], b = i + 1 < bytes.size() ? bytes[i + 1] : 0,
                   c = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t n = (a << 16) | (b << 8) | c;
    out += digits[(n >> 18) & 63];
    out += digits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[n & 63] : '=';
  }
  return out;
}

template <class T>
void append(std::vector<uint8_t>& out, T value) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));  // little endian on every platform Weft builds for
  out.insert(out.end(), raw, raw + sizeof(T));
}

void align(std::vector<uint8_t>& out, size_t to) {
  while (out.size() % to) out.push_back(0);
}

const char* shapeTypeName(ShapeType type) {
  switch (type) {
    case ShapeType::Plane:
      return "plane";
    case ShapeType::Box:
      return "box";
    case ShapeType::Sphere:
      return "sphere";
    case ShapeType::Capsule:
      return "capsule";
  }
  return "unknown";
}

nlohmann::json shapeJson(const ShapeGeometry& g, const Transform& pose, bool moving) {
  return {{"type", shapeTypeName(g.type)},
          {"radius", g.radius},
          {"halfHeight", g.halfHeight},
          {"half", {g.halfExtents.x, g.halfExtents.y, g.halfExtents.z}},
          {"pose", {pose.p.x, pose.p.y, pose.p.z, pose.q.x, pose.q.y, pose.q.z, pose.q.w}},
          {"moving", moving}};
}

/// `text` safe inside a <script> element: no "</" can close it early.
std::string scriptSafe(std::string text) {
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3))
    text.replace(at, 2, "<\\/");
  return text;
}

std::string htmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

class HtmlWriter final : public FrameWriter {
 public:
  HtmlWriter(std::filesystem::path path, std::string scene, const ModelDesc* cloth,
             const RigidDesc* rigid, double fps)
      : path_(std::move(path)), scene_(std::move(scene)), cloth_(cloth), rigid_(rigid), fps_(fps) {}

  ~HtmlWriter() override {
    try {
      if (!finished_) finish();  // an error unwinding the run still leaves the frames so far
    } catch (...) {
    }
  }

  void writeFrame(int frame, const FrameState& state) override {
    if (frame != int(frames_)) throw Error("the HTML writer takes frames in order from 0");
    particles_.insert(particles_.end(), state.particles.begin(), state.particles.end());
    poses_.insert(poses_.end(), state.bodies.begin(), state.bodies.end());
    ++frames_;
  }

  void setRunReport(const RunReport& report) override { report_ = report; }

  void finish() override {
    if (finished_) return;
    finished_ = true;
    writeFileAtomically(path_.string(), page(), "HTML page");
  }

  std::vector<std::string> files() const override { return {path_.string()}; }

 private:
  /// Moving shapes of the cloth (static ones are placed once).
  std::vector<const ShapeDesc*> movingShapes() const {
    std::vector<const ShapeDesc*> out;
    if (cloth_)
      for (const ShapeDesc& s : cloth_->shapes)
        if (s.motion.type != MotionType::Static) out.push_back(&s);
    return out;
  }

  std::string page() const {
    // The box every frame fits in (the quantization's range), never degenerate.
    Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
    auto grow = [&](const Vec3& x) {
      if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) return;
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], x[a]);
        hi[a] = std::max(hi[a], x[a]);
      }
    };
    for (const Vec3& x : particles_) grow(x);
    for (const Transform& t : poses_) grow(t.p);
    if (lo.x > hi.x) lo = hi = Vec3{};
    float span = 0.0f;
    for (int a = 0; a < 3; ++a) {
      hi[a] = std::max(hi[a], lo[a] + 1e-6f);
      span = std::max(span, hi[a] - lo[a]);
    }
    auto quantize = [&](float v, int a) {
      const float t = std::isfinite(v) ? (v - lo[a]) / (hi[a] - lo[a]) : 0.0f;
      return uint16_t(std::lround(std::clamp(t, 0.0f, 1.0f) * 65535.0f));
    };

    nlohmann::json meta = {
        {"scene", scene_},
        {"fps", fps_},
        {"frames", frames_},
        {"box", {{"lo", {lo.x, lo.y, lo.z}}, {"hi", {hi.x, hi.y, hi.z}}, {"span", span}}},
        {"shapes", nlohmann::json::array()},
        {"frameMs", report_.frameMs},
        {"summary",
         {{"text", report_.text}, {"device", report_.device}, {"checks", report_.checks}}}};
    if (!report_.intersections.empty()) meta["intersections"] = report_.intersections;
    if (cloth_ && !report_.intersectingPairs.empty()) {
      // frame → [v0, v1, a, b, c]: the edge's segment and the triangle's corners (particle ids)
      nlohmann::json pairs = nlohmann::json::object();
      for (const auto& [frame, list] : report_.intersectingPairs) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& [edge, triangle] : list) {
          const Int4 e = cloth_->edges[size_t(edge)];
          const Int3 t = cloth_->triangles[size_t(triangle)];
          rows.push_back({e.z, e.w, t.x, t.y, t.z});
        }
        pairs[std::to_string(frame)] = rows;
      }
      meta["intersectingPairs"] = pairs;
    }

    std::vector<uint8_t> data;
    if (cloth_) {
      const size_t n = size_t(cloth_->numParticles());
      meta["cloth"] = {{"particles", n}, {"triangles", cloth_->numTriangles()}};
      for (const Int3& t : cloth_->triangles)
        for (int v : {t.x, t.y, t.z}) append(data, uint32_t(v));
      for (const Vec3& x : particles_)
        for (int a = 0; a < 3; ++a) append(data, quantize(x[a], a));
      align(data, 4);
      for (const ShapeDesc& s : cloth_->shapes)
        meta["shapes"].push_back(
            shapeJson(s.geometry, shapePoseAt(s, 0.0f), s.motion.type != MotionType::Static));
    }
    if (rigid_) {
      const size_t n = size_t(rigid_->numBodies());
      nlohmann::json shapes = nlohmann::json::array();
      for (const RigidShapeDesc& s : rigid_->shapes) {
        if (s.body < 0) {
          meta["shapes"].push_back(shapeJson(s.geometry, s.localPose, false));
          continue;
        }
        const Transform& t = s.localPose;
        shapes.push_back({s.body, shapeTypeName(s.geometry.type), s.geometry.radius,
                          s.geometry.halfHeight, s.geometry.halfExtents.x, s.geometry.halfExtents.y,
                          s.geometry.halfExtents.z, t.p.x, t.p.y, t.p.z, t.q.x, t.q.y, t.q.z,
                          t.q.w});
      }
      meta["bodies"] = {{"count", n}, {"shapes", shapes}};
      for (const Transform& t : poses_)
        for (int a = 0; a < 3; ++a) append(data, quantize(t.p[a], a));
      align(data, 2);
      for (const Transform& t : poses_)
        for (float c : {t.q.x, t.q.y, t.q.z, t.q.w})
          append(data, int16_t(std::lround(std::clamp(std::isfinite(c) ? c : 0.0f, -1.0f, 1.0f) *
                                           32767.0f)));
    }
    align(data, 4);
    const std::vector<const ShapeDesc*> moving = movingShapes();
    for (size_t f = 0; f < frames_; ++f)
      for (const ShapeDesc* s : moving) {
        const Transform t = shapePoseAt(*s, float(double(f) / fps_));
        for (float v : {t.p.x, t.p.y, t.p.z, t.q.x, t.q.y, t.q.z, t.q.w}) append(data, v);
      }

    std::string html;
    html.reserve(data.size() * 4 / 3 + 1200000);
    html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>weft: " +
            htmlEscape(scene_) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
    html += "<canvas id=\"weft-canvas\"></canvas>\n<pre id=\"weft-overlay\"></pre>\n";
    html +=
        "<details id=\"weft-run\"><summary>run summary</summary><pre id=\"weft-summary\">"
        "</pre></details>\n";
    html +=
        "<div id=\"weft-controls\"><button id=\"weft-play\">pause</button>"
        "<input id=\"weft-frame\" type=\"range\" min=\"0\" value=\"0\">"
        "<label>speed <select id=\"weft-speed\"><option>0.25</option><option>0.5</option>"
        "<option selected>1</option><option>2</option><option>4</option></select></label>"
        "<label id=\"weft-pairs-toggle\" hidden><input id=\"weft-pairs\" type=\"checkbox\" "
        "checked> intersections</label>"
        "<button id=\"weft-export\">save image</button></div>\n"
        "<pre id=\"weft-status\">weft-status loading</pre>\n";
    html += "<script type=\"application/json\" id=\"weft-meta\">" + scriptSafe(meta.dump()) +
            "</script>\n";
    html += "<script type=\"application/octet-stream\" id=\"weft-data\">\n" + base64(data) +
            "\n</script>\n";
#if defined(WEFT_HTML_VIEWER)
    html +=
        "<script>\n// three.js r111 (https://github.com/mrdoob/three.js), (c) 2010-2019 three.js "
        "authors, MIT License\n";
    html += kThreeJs;
    html += "\n</script>\n<script>\n";
    html += kHtmlViewerJs;
    html += "\n</script>\n";
#endif
    html += "</body>\n</html>\n";
    return html;
  }

  static constexpr const char* kStyle =
      "html,body{margin:0;height:100%;overflow:hidden;font:13px/1.35 system-ui,sans-serif}\n"
      "#weft-canvas{position:absolute;inset:0;width:100%;height:100%;display:block}\n"
      "#weft-overlay{position:absolute;left:10px;top:8px;margin:0;color:#223;"
      "background:#ffffffc0;padding:4px 6px;border-radius:4px}\n"
      "#weft-run{position:absolute;right:10px;top:8px;max-width:45%;max-height:70%;overflow:auto;"
      "background:#ffffffd0;padding:4px 6px;border-radius:4px}\n"
      "#weft-run pre{margin:4px 0 0;white-space:pre-wrap}\n"
      "#weft-controls{position:absolute;left:10px;right:10px;bottom:10px;display:flex;gap:10px;"
      "align-items:center;background:#ffffffc0;padding:6px;border-radius:4px}\n"
      "#weft-frame{flex:1}\n#weft-status{display:none}\n";

  std::filesystem::path path_;
  std::string scene_;
  const ModelDesc* cloth_;
  const RigidDesc* rigid_;
  double fps_;
  size_t frames_ = 0;
  std::vector<Vec3> particles_;   // (frames x particles)
  std::vector<Transform> poses_;  // (frames x bodies)
  RunReport report_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<FrameWriter> makeHtmlWriter(const std::filesystem::path& path,
                                            const std::string& scene, const ModelDesc* cloth,
                                            const RigidDesc* rigid, double framesPerSecond) {
  requireHtmlViewer();
  return std::make_unique<HtmlWriter>(path, scene, cloth, rigid, framesPerSecond);
}

}  // namespace weft
