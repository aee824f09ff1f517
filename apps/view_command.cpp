// weft view INPUT -o PAGE.html: the HTML player (apps/html_writer.h) of frames already written —
// a .usda that `weft run` wrote (cloth points, body poses and shapes, with their time samples) or a
// folder of the OBJ frames `weft run --format obj` wrote (<scene>_00000.obj, …; cloth only).
//
// The .usda reader knows the layout UsdaWriter (apps/frame_writer.cpp) writes, not USD at large:
// prims `def TYPE "NAME"` with braces on their own lines; the cloth is the Mesh "cloth", its shapes
// the top-level prims "shape_K", the rigid model's static shapes "static_K", its bodies the Xforms
// "body_K" holding their shapes; poses as xformOp:translate / xformOp:orient (w, x, y, z), static
// or time-sampled per frame. Anything else is an error that names the line.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "apps/commands.h"
#include "apps/common.h"
#include "apps/html_writer.h"
#include "kernels/runtime/errors.h"
#include "scenes/obj_loader.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

/// Every number in `text`, in order.
std::vector<double> numbersIn(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (*p) {
    if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.') {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end != p) {
        out.push_back(v);
        p = end;
        continue;
      }
    }
    ++p;
  }
  return out;
}

struct Prim {
  std::string type, name;
  int body = -1;                                      // the body Xform it sits in (-1: top level)
  std::map<std::string, std::vector<double>> values;  // radius, height, scale, translate, orient
  std::map<int, std::vector<double>> translateSamples, orientSamples;
  std::vector<int> faceVertexIndices;
  std::map<int, std::vector<double>> pointSamples;  // cloth points per frame
};

Transform poseOf(const std::vector<double>& t, const std::vector<double>& q) {
  Transform pose;
  if (t.size() == 3) pose.p = {float(t[0]), float(t[1]), float(t[2])};
  if (q.size() == 4) pose.q = {float(q[1]), float(q[2]), float(q[3]), float(q[0])};  // USD: w first
  return pose;
}

ShapeGeometry geometryOf(const Prim& prim, const std::string& where) {
  ShapeGeometry g;
  auto value = [&](const char* key) {
    const auto it = prim.values.find(key);
    if (it == prim.values.end() || it->second.empty())
      throw Error(where + ": " + prim.type + " \"" + prim.name + "\" has no " + key);
    return it->second;
  };
  if (prim.type == "Sphere") {
    g.type = ShapeType::Sphere;
    g.radius = float(value("radius")[0]);
  } else if (prim.type == "Capsule") {
    g.type = ShapeType::Capsule;
    g.radius = float(value("radius")[0]);
    g.halfHeight = float(value("height")[0] / 2.0);
  } else if (prim.type == "Cube") {
    g.type = ShapeType::Box;
    const std::vector<double> s = value("scale");
    g.halfExtents = {float(s.at(0)), float(s.at(1)), float(s.at(2))};
  } else if (prim.type == "Mesh") {
    g.type = ShapeType::Plane;  // the only shape UsdaWriter writes as a Mesh
  } else {
    throw Error(where + ": unknown shape prim " + prim.type + " \"" + prim.name + "\"");
  }
  return g;
}

struct Frames {
  std::string scene;
  double fps = 60.0;
  ModelDesc cloth;
  RigidDesc rigid;
  bool hasCloth = false, hasRigid = false;
  std::vector<std::vector<Vec3>> particles;    // per frame
  std::vector<std::vector<Transform>> bodies;  // per frame
};

Frames readUsda(const fs::path& path) {
  std::ifstream file(path);
  if (!file) throw Error("cannot read " + path.string());
  Frames out;
  out.scene = path.stem().string();
  std::vector<Prim> prims;
  std::vector<int> stack;                                 // open prims (indices), innermost last
  int pendingPrim = -1;                                   // a def whose "{" has not come yet
  std::map<int, std::vector<double>>* samples = nullptr;  // inside a timeSamples block
  const std::regex def(R"re(^\s*def (\w+) "(\w+)")re");
  std::string line;
  int lineNumber = 0;
  std::smatch m;
  while (std::getline(file, line)) {
    ++lineNumber;
    const std::string where = path.string() + ":" + std::to_string(lineNumber);
    if (lineNumber == 1 && line.rfind("#usda", 0) != 0)
      throw Error(path.string() + " is not a USD ASCII file (no #usda header)");
    if (samples) {
      if (line.find('}') != std::string::npos && line.find(':') == std::string::npos) {
        samples = nullptr;
        continue;
      }
      const size_t colon = line.find(':');
      if (colon == std::string::npos) throw Error(where + ": expected 'frame: value'");
      (*samples)[std::atoi(line.substr(0, colon).c_str())] = numbersIn(line.substr(colon + 1));
      continue;
    }
    if (line.find("timeCodesPerSecond") != std::string::npos) {
      out.fps = numbersIn(line).at(0);
      continue;
    }
    if (std::regex_search(line, m, def)) {
      Prim prim;
      prim.type = m[1];
      prim.name = m[2];
      for (int open : stack)
        if (prims[size_t(open)].name.rfind("body_", 0) == 0)
          prim.body = std::atoi(prims[size_t(open)].name.c_str() + 5);
      prims.push_back(prim);
      pendingPrim = int(prims.size()) - 1;
      continue;
    }
    const std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (trimmed == "{") {
      stack.push_back(pendingPrim);
      pendingPrim = -1;
      continue;
    }
    if (trimmed == "}") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    if (stack.empty() || stack.back() < 0) continue;
    Prim& prim = prims[size_t(stack.back())];
    const size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = line.substr(0, equals);
    const std::string value = line.substr(equals + 1);
    if (name.find(".timeSamples") != std::string::npos) {
      if (name.find("xformOp:translate") != std::string::npos)
        samples = &prim.translateSamples;
      else if (name.find("xformOp:orient") != std::string::npos)
        samples = &prim.orientSamples;
      else if (name.find("points") != std::string::npos)
        samples = &prim.pointSamples;
      else
        throw Error(where + ": unexpected time samples");
      continue;
    }
    for (const char* key :
         {"radius", "height", "xformOp:scale", "xformOp:translate", "xformOp:orient"})
      if (name.find(key) != std::string::npos && name.find("xformOpOrder") == std::string::npos)
        prim.values[std::string(key).substr(std::string(key).find(':') + 1)] = numbersIn(value);
    if (name.find("faceVertexIndices") != std::string::npos)
      for (double v : numbersIn(value)) prim.faceVertexIndices.push_back(int(v));
  }
  // weft run writes whole files (a temporary renamed when complete); one cut short was not left
  // by it, and its last frame would be drawn from what happens to be there.
  if (samples || !stack.empty())
    throw Error(path.string() + " ends inside " +
                (samples ? std::string("a block of time samples") : std::string("a prim")) +
                " (line " + std::to_string(lineNumber) +
                "): the file is incomplete; write it again with weft run");

  // The prims as models and frames.
  std::vector<int> frameNumbers;
  int bodyFrames = -1;  // time samples of the first body; every body has as many
  for (const Prim& prim : prims) {
    const std::string where = path.string() + " (" + prim.name + ")";
    if (prim.type == "Mesh" && prim.name == "cloth") {
      out.hasCloth = true;
      const size_t firstCount =
          prim.pointSamples.empty() ? 0 : prim.pointSamples.begin()->second.size();
      for (const auto& [frame, values] : prim.pointSamples) {
        if (values.size() != firstCount || values.size() % 3 != 0)
          throw Error(where + ": frame " + std::to_string(frame) + " has " +
                      std::to_string(values.size()) + " coordinates, the first frame " +
                      std::to_string(firstCount) + " (the file is incomplete or was edited)");
        std::vector<Vec3> points(values.size() / 3);
        for (size_t i = 0; i < points.size(); ++i)
          points[i] = {float(values[3 * i]), float(values[3 * i + 1]), float(values[3 * i + 2])};
        out.particles.push_back(std::move(points));
        frameNumbers.push_back(frame);
      }
      if (out.particles.empty()) throw Error(where + ": the cloth has no time-sampled points");
      out.cloth.positions = out.particles.front();
      for (size_t i = 0; i + 2 < prim.faceVertexIndices.size(); i += 3)
        out.cloth.triangles.push_back({prim.faceVertexIndices[i], prim.faceVertexIndices[i + 1],
                                       prim.faceVertexIndices[i + 2]});
    } else if (prim.type == "Xform" && prim.name.rfind("body_", 0) == 0) {
      out.hasRigid = true;
      const int body = std::atoi(prim.name.c_str() + 5);
      if (bodyFrames < 0) bodyFrames = int(prim.translateSamples.size());
      if (int(prim.translateSamples.size()) != bodyFrames ||
          prim.orientSamples.size() != prim.translateSamples.size())
        throw Error(where + ": " + std::to_string(prim.translateSamples.size()) +
                    " positions and " + std::to_string(prim.orientSamples.size()) +
                    " orientations over time, the first body " + std::to_string(bodyFrames) +
                    " of each (the file is incomplete or was edited)");
      if (body >= out.rigid.numBodies()) out.rigid.bodies.resize(size_t(body) + 1);
      if (out.bodies.size() < prim.translateSamples.size())
        out.bodies.resize(prim.translateSamples.size());
      size_t k = 0;
      for (const auto& [frame, t] : prim.translateSamples) {
        const auto q = prim.orientSamples.find(frame);
        std::vector<Transform>& poses = out.bodies[k++];
        if (poses.size() <= size_t(body)) poses.resize(size_t(body) + 1);
        poses[size_t(body)] =
            poseOf(t, q == prim.orientSamples.end() ? std::vector<double>{} : q->second);
      }
    } else if (prim.type != "Xform") {
      const bool bodyShape = prim.body >= 0, staticShape = prim.name.rfind("static_", 0) == 0;
      const Transform pose = poseOf(
          prim.values.count("translate") ? prim.values.at("translate") : std::vector<double>{},
          prim.values.count("orient") ? prim.values.at("orient") : std::vector<double>{});
      if (bodyShape || staticShape) {
        RigidShapeDesc shape;
        shape.name = prim.name;
        shape.body = prim.body;
        shape.geometry = geometryOf(prim, where);
        shape.localPose = pose;
        out.rigid.shapes.push_back(shape);
        out.hasRigid = true;
      } else {
        ShapeDesc shape;
        shape.name = prim.name;
        shape.geometry = geometryOf(prim, where);
        shape.motion.pose0 = pose;
        if (!prim.translateSamples.empty()) {  // moving: its poses at every frame
          shape.motion.type = MotionType::Sampled;
          shape.motion.sampleInterval = float(1.0 / out.fps);
          for (const auto& [frame, t] : prim.translateSamples) {
            const auto q = prim.orientSamples.find(frame);
            shape.motionSamples.push_back(
                poseOf(t, q == prim.orientSamples.end() ? std::vector<double>{} : q->second));
          }
          shape.motion.pose0 = shape.motionSamples.front();
        }
        out.cloth.shapes.push_back(shape);
      }
    }
  }
  if (!out.hasCloth && !out.hasRigid)
    throw Error(path.string() + " holds no cloth and no bodies written by weft run");
  if (out.hasCloth && out.hasRigid && out.particles.size() != out.bodies.size())
    throw Error(path.string() + ": the cloth has " + std::to_string(out.particles.size()) +
                " frames and the bodies " + std::to_string(out.bodies.size()));
  return out;
}

Frames readObjFolder(const fs::path& folder, double fps) {
  Frames out;
  out.fps = fps;
  out.hasCloth = true;
  std::vector<fs::path> files;
  const std::regex frameName(R"re((.+)_(\d{5})\.obj)re");
  std::smatch m;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, frameName)) continue;
    if (out.scene.empty()) out.scene = m[1];
    if (m[1] != out.scene)
      throw Error(folder.string() + " holds the frames of two runs (" + out.scene + ", " +
                  std::string(m[1]) + "): give a folder of one");
    files.push_back(entry.path());
  }
  if (files.empty())
    throw Error(folder.string() +
                " holds no OBJ frames (<scene>_00000.obj, … as weft run "
                "--format obj writes them)");
  std::sort(files.begin(), files.end());
  // Frame k is <scene>_k.obj, from 0 without gaps: a missing file would shift every later frame
  // to the wrong time.
  for (size_t k = 0; k < files.size(); ++k) {
    char expected[32];
    std::snprintf(expected, sizeof(expected), "_%05zu.obj", k);
    if (files[k].filename().string() != out.scene + expected)
      throw Error(folder.string() + ": frame " + std::to_string(k) + " (" + out.scene + expected +
                  ") is missing; the frames must be numbered from 0 without gaps (found " +
                  files[k].filename().string() + " in its place)");
  }
  for (const fs::path& f : files) {
    MeshData mesh = loadObjMesh(f.string());
    if (out.particles.empty()) {
      out.cloth.triangles = mesh.triangles;
      out.cloth.positions = mesh.vertices;
    } else if (mesh.vertices.size() != out.cloth.positions.size()) {
      throw Error(f.string() + " has " + std::to_string(mesh.vertices.size()) +
                  " vertices; the first frame has " + std::to_string(out.cloth.positions.size()));
    }
    out.particles.push_back(std::move(mesh.vertices));
  }
  return out;
}

int view(const ViewOptions& options, std::ostream& out) {
  if (options.output.empty()) throw Error("give the page to write: -o FILE.html");
  checkOutputFile(options.output, "-o");
  if (!(options.fps > 0.0)) throw Error("--fps must be positive");
  const fs::path input(options.input);
  std::error_code ec;
  Frames frames;
  if (fs::is_directory(input, ec))
    frames = readObjFolder(input, options.fps);
  else if (fs::is_regular_file(input, ec) && input.extension() == ".obj")
    throw Error(options.input +
                " is one OBJ frame: give the folder of a run's frames (weft view "
                "DIR -o PAGE.html) or its .usda");
  else if (fs::is_regular_file(input, ec))
    frames = readUsda(input);
  else
    throw Error(options.input + " does not exist (give a .usda or a folder of OBJ frames)");

  auto writer =
      makeHtmlWriter(options.output, frames.scene, frames.hasCloth ? &frames.cloth : nullptr,
                     frames.hasRigid ? &frames.rigid : nullptr, frames.fps);
  const size_t count = frames.hasCloth ? frames.particles.size() : frames.bodies.size();
  for (size_t k = 0; k < count; ++k)
    writer->writeFrame(int(k), {frames.hasCloth ? std::span<const Vec3>(frames.particles[k])
                                                : std::span<const Vec3>{},
                                frames.hasRigid ? std::span<const Transform>(frames.bodies[k])
                                                : std::span<const Transform>{}});
  RunReport report;
  report.text = "converted by weft view from " + options.input + "\n";
  report.device = "frames from " + input.filename().string();
  writer->setRunReport(report);
  writer->finish();
  out << "weft view " << options.input << "\n  frames        " << count << " at " << frames.fps
      << " fps\n  output        " << options.output << "\n";
  return kExitOk;
}

}  // namespace

int viewCommand(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return view(options, out);
  } catch (const Error& e) {
    err << "weft view: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace weft
