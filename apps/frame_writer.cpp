#include "apps/frame_writer.h"

#include "apps/html_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

fs::path prepareDirectory(const std::string& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory))
    throw Error("cannot create the output folder " + directory + " (" + ec.message() + ")");
  return fs::path(directory);
}

FILE* openForWriting(const fs::path& path) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
  return file;
}

/// Closes `file`, written under temporaryPathFor(path), and renames it to `path`; a write or close
/// that failed removes the temporary and throws.
void closeIntoPlace(FILE* file, const fs::path& path) {
  const std::string tmp = temporaryPathFor(path.string());
  const bool failed = std::ferror(file) != 0;
  const bool closed = std::fclose(file) == 0;
  if (failed || !closed) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error("writing " + path.string() + " failed (disk full?)");
  }
  moveIntoPlace(tmp, path.string());
}

void writePoints(FILE* f, std::span<const Vec3> points) {
  std::fputc('[', f);
  for (size_t i = 0; i < points.size(); ++i)
    std::fprintf(f, "%s(%.7g, %.7g, %.7g)", i ? ", " : "", points[i].x, points[i].y, points[i].z);
  std::fputc(']', f);
}

/// The geometry lines of a shape prim (the shape's own placement comes as xform ops).
void writeShapeGeometry(FILE* f, const ShapeGeometry& g, const std::string& name) {
  switch (g.type) {
    case ShapeType::Plane:
      std::fprintf(f,
                   "    def Mesh \"%s\"\n    {\n        int[] faceVertexCounts = [4]\n"
                   "        int[] faceVertexIndices = [0, 1, 2, 3]\n"
                   "        point3f[] points = [(-10, -10, 0), (10, -10, 0), (10, 10, 0), "
                   "(-10, 10, 0)]\n",
                   name.c_str());
      break;
    case ShapeType::Box:
      std::fprintf(f, "    def Cube \"%s\"\n    {\n        double size = 2\n", name.c_str());
      break;
    case ShapeType::Sphere:
      std::fprintf(f, "    def Sphere \"%s\"\n    {\n        double radius = %.7g\n", name.c_str(),
                   g.radius);
      break;
    case ShapeType::Capsule:
      std::fprintf(f,
                   "    def Capsule \"%s\"\n    {\n        uniform token axis = \"Z\"\n"
                   "        double height = %.7g\n        double radius = %.7g\n",
                   name.c_str(), 2.0 * g.halfHeight, g.radius);
      break;
  }
}

/// The op order of a prim posed by translate and orient, and for a box (`g`) the half extents as
/// scale (a Cube of size 2 scaled by them is the box); `g` null: no geometry (a body's Xform).
void writeScaleAndOrder(FILE* f, const ShapeGeometry* g) {
  const bool box = g && g->type == ShapeType::Box;
  if (box)
    std::fprintf(f, "        float3 xformOp:scale = (%.7g, %.7g, %.7g)\n", g->halfExtents.x,
                 g->halfExtents.y, g->halfExtents.z);
  std::fprintf(f,
               "        uniform token[] xformOpOrder = [\"xformOp:translate\", "
               "\"xformOp:orient\"%s]\n",
               box ? ", \"xformOp:scale\"" : "");
}

/// Pose lines of a prim placed once.
void writeStaticXform(FILE* f, const Transform& t, const ShapeGeometry& g) {
  std::fprintf(f, "        double3 xformOp:translate = (%.7g, %.7g, %.7g)\n", t.p.x, t.p.y, t.p.z);
  std::fprintf(f, "        quatf xformOp:orient = (%.7g, %.7g, %.7g, %.7g)\n", t.q.w, t.q.x, t.q.y,
               t.q.z);  // USD quatf is (w, x, y, z)
  writeScaleAndOrder(f, &g);
}

/// Time-sampled translate and orient: sample k is frame frameOf(k) at pose poseOf(k), k < count.
template <class FrameOf, class PoseOf>
void writePoseSamples(FILE* f, size_t count, FrameOf frameOf, PoseOf poseOf) {
  std::fprintf(f, "        double3 xformOp:translate.timeSamples = {\n");
  for (size_t k = 0; k < count; ++k) {
    const Transform t = poseOf(k);
    std::fprintf(f, "            %d: (%.7g, %.7g, %.7g),\n", frameOf(k), t.p.x, t.p.y, t.p.z);
  }
  std::fprintf(f, "        }\n        quatf xformOp:orient.timeSamples = {\n");
  for (size_t k = 0; k < count; ++k) {
    const Transform t = poseOf(k);
    std::fprintf(f, "            %d: (%.7g, %.7g, %.7g, %.7g),\n", frameOf(k), t.q.w, t.q.x, t.q.y,
                 t.q.z);
  }
  std::fprintf(f, "        }\n");
}

/// One .usda file for whatever the simulation holds: the cloth as a Mesh with time-sampled points
/// and its shapes as prims (kinematic ones with time-sampled poses), the rigid bodies as Xforms
/// with time-sampled translate/orient holding their shapes, and the rigid model's static shapes
/// at the top level. The cloth's points are streamed to the file frame by frame; USD wants each
/// attribute's samples together, so the bodies' poses are kept in memory and written by
/// finish(), after the cloth.
class UsdaWriter final : public FrameWriter {
 public:
  UsdaWriter(const fs::path& path, const ModelDesc* cloth, const RigidDesc* rigid, double fps,
             int plannedFrames)
      : path_(path), cloth_(cloth), rigid_(rigid), fps_(fps) {
    file_ = openForWriting(temporaryPathFor(path.string()));
    std::fprintf(file_, "#usda 1.0\n(\n    defaultPrim = \"World\"\n");
    // endTimeCode is rewritten in place by finish() when fewer frames were written; the padding
    // keeps the line length fixed.
    endTimeOffset_ = std::ftell(file_);
    std::fprintf(file_, "    endTimeCode = %-12d\n", plannedFrames);
    std::fprintf(file_,
                 "    metersPerUnit = 1\n    startTimeCode = 0\n    timeCodesPerSecond = %.9g\n"
                 "    upAxis = \"Z\"\n)\n\ndef Xform \"World\"\n{\n",
                 fps);
    if (cloth_) beginCloth(plannedFrames);
  }

  ~UsdaWriter() override {
    try {
      if (file_) finish();  // an error unwinding the run still leaves the frames written so far
    } catch (...) {
    }
  }

  void writeFrame(int frame, const FrameState& state) override {
    if (cloth_) {
      std::fprintf(file_, "            %d: ", frame);
      writePoints(file_, state.particles);
      std::fprintf(file_, ",\n");
    }
    if (rigid_) {
      frames_.push_back(frame);
      poses_.insert(poses_.end(), state.bodies.begin(), state.bodies.end());
    }
    lastFrame_ = frame;
    if (std::ferror(file_)) throw Error("writing " + path_.string() + " failed (disk full?)");
  }

  void finish() override {
    if (!file_) return;
    if (cloth_) std::fprintf(file_, "        }\n    }\n");  // the points' samples, the mesh
    if (rigid_) writeBodies();
    std::fprintf(file_, "}\n");
    std::fseek(file_, endTimeOffset_, SEEK_SET);
    std::fprintf(file_, "    endTimeCode = %-12d\n", std::max(lastFrame_, 0));
    FILE* file = file_;
    file_ = nullptr;
    closeIntoPlace(file, path_);  // the file appears only when complete
  }

  std::vector<std::string> files() const override { return {path_.string()}; }

 private:
  /// The cloth's shapes, then its mesh up to the opening of the points' time samples.
  void beginCloth(int plannedFrames) {
    writeShapes(plannedFrames);
    std::fprintf(file_, "    def Mesh \"cloth\"\n    {\n        uniform bool doubleSided = 1\n");
    std::fprintf(file_, "        int[] faceVertexCounts = [");
    for (int t = 0; t < cloth_->numTriangles(); ++t) std::fprintf(file_, "%s3", t ? ", " : "");
    std::fprintf(file_, "]\n        int[] faceVertexIndices = [");
    for (int t = 0; t < cloth_->numTriangles(); ++t) {
      const Int3 tri = cloth_->triangles[t];
      std::fprintf(file_, "%s%d, %d, %d", t ? ", " : "", tri.x, tri.y, tri.z);
    }
    std::fprintf(file_, "]\n        uniform token subdivisionScheme = \"none\"\n");
    std::fprintf(file_, "        point3f[] points.timeSamples = {\n");
  }

  /// Pose ops of a cloth shape prim: fixed, or kinematic (poses are a function of time, evaluated
  /// here on the host at frame times).
  void writeXform(const ShapeDesc& shape, int plannedFrames) {
    if (shape.motion.type == MotionType::Static) {
      writeStaticXform(file_, shape.motion.pose0, shape.geometry);
      return;
    }
    writePoseSamples(
        file_, size_t(plannedFrames) + 1, [](size_t k) { return int(k); },
        [&](size_t k) { return shapePoseAt(shape, float(double(k) / fps_)); });
    writeScaleAndOrder(file_, &shape.geometry);
  }

  void writeShapes(int plannedFrames) {
    for (size_t i = 0; i < cloth_->shapes.size(); ++i) {
      const ShapeDesc& s = cloth_->shapes[i];
      const std::string name = "shape_" + std::to_string(i);
      writeShapeGeometry(file_, s.geometry, name);
      if (!s.name.empty())
        std::fprintf(file_, "        custom string weft:name = \"%s\"\n", s.name.c_str());
      writeXform(s, plannedFrames);
      std::fprintf(file_, "    }\n\n");
    }
  }

  /// The rigid model's static shapes, then every body with its poses and shapes.
  void writeBodies() {
    FILE* f = file_;
    const int bodies = rigid_->numBodies();
    for (size_t s = 0; s < rigid_->shapes.size(); ++s) {
      const RigidShapeDesc& shape = rigid_->shapes[s];
      if (shape.body >= 0) continue;
      writeShapeGeometry(f, shape.geometry, "static_" + std::to_string(s));
      writeStaticXform(f, shape.localPose, shape.geometry);
      std::fprintf(f, "    }\n");
    }
    for (int b = 0; b < bodies; ++b) {
      std::fprintf(f, "    def Xform \"body_%d\"\n    {\n", b);
      writePoseSamples(
          f, frames_.size(), [&](size_t k) { return frames_[k]; },
          [&](size_t k) { return poses_[k * size_t(bodies) + size_t(b)]; });
      writeScaleAndOrder(f, nullptr);
      for (size_t s = 0; s < rigid_->shapes.size(); ++s) {
        const RigidShapeDesc& shape = rigid_->shapes[s];
        if (shape.body != b) continue;
        writeShapeGeometry(f, shape.geometry, "shape_" + std::to_string(s));
        writeStaticXform(f, shape.localPose, shape.geometry);
        std::fprintf(f, "    }\n");
      }
      std::fprintf(f, "    }\n");
    }
  }

  fs::path path_;
  const ModelDesc* cloth_;
  const RigidDesc* rigid_;
  double fps_;
  FILE* file_ = nullptr;
  long endTimeOffset_ = 0;
  int lastFrame_ = -1;
  std::vector<int> frames_;       // the frames written, for the bodies' samples
  std::vector<Transform> poses_;  // (frames x bodies)
};

/// One OBJ per frame: <scene>_<frame>.obj with the cloth's vertices and triangles. The frames of
/// an earlier run under the same name are removed first, so that the folder holds this run's
/// frames only (a shorter run would otherwise leave the earlier run's last frames behind it, and
/// `weft view DIR` would play them as this run's).
class ObjSequenceWriter final : public FrameWriter {
 public:
  ObjSequenceWriter(fs::path directory, std::string scene, const ModelDesc& desc)
      : directory_(std::move(directory)), scene_(std::move(scene)), desc_(desc) {
    const std::string prefix = scene_ + "_";
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(directory_, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() < prefix.size() + 5 + 4 || name.compare(0, prefix.size(), prefix) != 0 ||
          name.compare(name.size() - 4, 4, ".obj") != 0 || !e.is_regular_file(ec))
        continue;
      const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 4);
      if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      if (fs::remove(e.path(), ec)) ++removed_;
    }
  }

  void writeFrame(int frame, const FrameState& state) override {
    char name[64];
    std::snprintf(name, sizeof(name), "_%05d.obj", frame);
    const fs::path path = directory_ / (scene_ + name);
    FILE* f = openForWriting(temporaryPathFor(path.string()));
    for (const Vec3& x : state.particles) std::fprintf(f, "v %.7g %.7g %.7g\n", x.x, x.y, x.z);
    for (const Int3& t : desc_.triangles)
      std::fprintf(f, "f %d %d %d\n", t.x + 1, t.y + 1, t.z + 1);
    closeIntoPlace(f, path);
    files_.push_back(path.string());
  }
  void finish() override {}
  std::vector<std::string> files() const override { return files_; }
  std::string notice() const override {
    if (removed_ == 0) return {};
    return "removed " + std::to_string(removed_) + " OBJ frame" + (removed_ > 1 ? "s" : "") +
           " of an earlier run (" + scene_ + "_NNNNN.obj) from " + directory_.string();
  }

 private:
  fs::path directory_;
  std::string scene_;
  const ModelDesc& desc_;
  std::vector<std::string> files_;
  int removed_ = 0;
};

}  // namespace

FrameFormat parseFrameFormat(const std::string& text) {
  if (text == "usda") return FrameFormat::Usda;
  if (text == "obj") return FrameFormat::Obj;
  if (text == "html") {
    requireHtmlViewer();  // with the other input checks, before any simulation work
    return FrameFormat::Html;
  }
  if (text == "none") return FrameFormat::None;
  throw Error("unknown output format '" + text + "': expected usda, obj, html or none");
}

std::unique_ptr<FrameWriter> makeFrameWriter(FrameFormat format, const std::string& directory,
                                             const std::string& sceneName, const ModelDesc* cloth,
                                             const RigidDesc* rigid, double framesPerSecond,
                                             int plannedFrames) {
  if (!cloth && !rigid) throw Error("a frame writer needs a cloth, a rigid model or both");
  if (format == FrameFormat::None) return nullptr;
  if (format == FrameFormat::Obj && rigid)
    throw Error("--format obj writes cloth meshes only; " + sceneName +
                " has rigid bodies: use usda or none");
  const fs::path dir = prepareDirectory(directory);
  if (format == FrameFormat::Html)
    return makeHtmlWriter(dir / (sceneName + ".html"), sceneName, cloth, rigid, framesPerSecond);
  if (format == FrameFormat::Usda)
    return std::make_unique<UsdaWriter>(dir / (sceneName + ".usda"), cloth, rigid, framesPerSecond,
                                        plannedFrames);
  return std::make_unique<ObjSequenceWriter>(dir, sceneName, *cloth);
}

}  // namespace weft
