#include "solver/model.h"

#include <algorithm>
#include <cmath>

#include "kernels/runtime/errors.h"
#include "solver/contact_filter.h"

namespace weft {

namespace {

/// The (element, slot) pairs of `offsets`/`entries` whose element passes `keep`, as a new CSR.
template <class Keep>
void filterAdjacency(const std::vector<int>& offsets, const std::vector<int>& entries,
                     int numParticles, Keep keep, std::vector<int>& outOffsets,
                     std::vector<int>& outEntries) {
  outOffsets.assign(size_t(numParticles) + 1, 0);
  outEntries.clear();
  for (int v = 0; v < numParticles; ++v) {
    for (int k = offsets[v]; k < offsets[v + 1]; k += 2) {
      if (!keep(entries[k])) continue;
      outEntries.push_back(entries[k]);
      outEntries.push_back(entries[k + 1]);
    }
    outOffsets[v + 1] = int(outEntries.size());
  }
}

void requireFinitePositive(float value, const char* name, bool allowZero) {
  if (!std::isfinite(value) || value < 0.0f || (!allowZero && value == 0.0f))
    throw Error(std::string("solver option ") + name + " = " + std::to_string(value) +
                " is invalid: it must be a finite " + (allowZero ? "non-negative" : "positive") +
                " number");
}

}  // namespace

void SolverOptions::validate() const {
  if (iterations < 1)
    throw Error("solver option iterations = " + std::to_string(iterations) +
                " is invalid: at least one iteration is needed");
  requireFinitePositive(frictionEpsilon, "frictionEpsilon", false);
  if (!isFinite(gravity)) throw Error("solver option gravity is not finite");
  requireFinitePositive(particleContact.ke, "particleContact.ke", true);
  requireFinitePositive(particleContact.kd, "particleContact.kd", true);
  requireFinitePositive(particleContact.mu, "particleContact.mu", true);
  requireFinitePositive(shapeContactMargin, "shapeContactMargin", true);
  const SelfContactOptions& sc = selfContact;
  if (sc.enabled) {
    requireFinitePositive(sc.radius, "selfContact.radius", false);
    requireFinitePositive(sc.margin, "selfContact.margin", false);
    if (sc.margin < sc.radius)
      throw Error("solver option selfContact.margin (" + std::to_string(sc.margin) +
                  ") must be at least selfContact.radius (" + std::to_string(sc.radius) +
                  "): pairs must be detected before they touch");
    if (!(sc.relaxation > 0.0f && sc.relaxation <= 1.0f))
      throw Error("solver option selfContact.relaxation must be in (0, 1]");
    requireFinitePositive(sc.restExclusion, "selfContact.restExclusion", true);
    requireFinitePositive(sc.edgeParallelEpsilon, "selfContact.edgeParallelEpsilon", true);
    requireFinitePositive(sc.reuseSlack, "selfContact.reuseSlack", true);
    if (sc.topologicalFilter < 0 || sc.bvhRebuildInterval < 0)
      throw Error(
          "solver options selfContact.topologicalFilter and bvhRebuildInterval must not "
          "be negative");
    if (sc.vertexTriangleCapacity < 1 || sc.edgeEdgeCapacity < 1 || sc.triangleVertexCapacity < 1)
      throw Error("self-contact capacities must be at least 1");
  }
}

Model::Model(const Device& device, const ModelDesc& desc, const SolverOptions& options)
    : numParticles(desc.numParticles()),
      numTriangles(desc.numTriangles()),
      numEdges(desc.numEdges()),
      numShapes(int(desc.shapes.size())) {
  options.validate();
  if (numParticles == 0) throw Error("the model has no particles");
  if (int(desc.adjacency.triangleOffsets.size()) != numParticles + 1 ||
      int(desc.coloring.colorOfParticle.size()) != numParticles)
    throw Error("internal error: the model description was not finalized (adjacency/coloring)");

  // Particles
  std::vector<float> invMass(static_cast<size_t>(numParticles));
  for (int i = 0; i < numParticles; ++i)
    invMass[i] = desc.masses[i] > 0.0f ? 1.0f / desc.masses[i] : 0.0f;
  masses = DeviceBuffer<float>(device, desc.masses);
  invMasses = DeviceBuffer<float>(device, invMass);
  radii = DeviceBuffer<float>(device, desc.radii);

  // Elements
  triangles = DeviceBuffer<Int3>(device, desc.triangles);
  triangleRestInverse = DeviceBuffer<Mat22>(device, desc.triangleRestInverse);
  triangleRestAreas = DeviceBuffer<float>(device, desc.triangleRestAreas);
  triangleMaterials = DeviceBuffer<TriangleMaterial>(device, desc.triangleMaterials);
  edges = DeviceBuffer<Int4>(device, desc.edges);
  edgeRestAngles = DeviceBuffer<float>(device, desc.edgeRestAngles);
  edgeRestLengths = DeviceBuffer<float>(device, desc.edgeRestLengths);
  edgeMaterials = DeviceBuffer<EdgeMaterial>(device, desc.edgeMaterials);

  // Solve adjacency: skip elements without energy (reference: membrane skipped when ke and ka
  // are <= 0; bending skipped when ke <= 0 and on boundary hinges).
  std::vector<int> triOffsets, triEntries, hingeOffsets, hingeEntries;
  filterAdjacency(
      desc.adjacency.triangleOffsets, desc.adjacency.triangleEntries, numParticles,
      [&](int t) {
        return desc.triangleMaterials[t].ke > 0.0f || desc.triangleMaterials[t].ka > 0.0f;
      },
      triOffsets, triEntries);
  filterAdjacency(
      desc.adjacency.edgeOffsets, desc.adjacency.edgeEntries, numParticles,
      [&](int e) {
        return desc.edges[e].x >= 0 && desc.edges[e].y >= 0 && desc.edgeMaterials[e].ke > 0.0f;
      },
      hingeOffsets, hingeEntries);
  for (int v = 0; v < numParticles; ++v)
    maxElementsPerParticle =
        std::max(maxElementsPerParticle, (triOffsets[v + 1] - triOffsets[v]) / 2 +
                                             (hingeOffsets[v + 1] - hingeOffsets[v]) / 2);
  solveTriangleOffsets = DeviceBuffer<int>(device, triOffsets);
  solveTriangleEntries = DeviceBuffer<int>(device, triEntries);
  solveHingeOffsets = DeviceBuffer<int>(device, hingeOffsets);
  solveHingeEntries = DeviceBuffer<int>(device, hingeEntries);

  // Full adjacency, for self-contact gathers.
  triangleOffsets = DeviceBuffer<int>(device, desc.adjacency.triangleOffsets);
  triangleEntries = DeviceBuffer<int>(device, desc.adjacency.triangleEntries);
  edgeOffsets = DeviceBuffer<int>(device, desc.adjacency.edgeOffsets);
  edgeEntries = DeviceBuffer<int>(device, desc.adjacency.edgeEntries);

  // Worlds: the self-contact filter's ids, and a batch's ranges.
  if (!desc.worlds.empty() && int(desc.worlds.size()) != numParticles)
    throw Error("the model's world ids do not match its particle count");
  worldRanges = desc.worldRanges;
  numWorlds = worldRanges.count();
  if (numWorlds > 1) {
    const ModelDesc::WorldRanges& r = worldRanges;
    const auto spans = [&](const std::vector<int>& begin, int total) {
      return int(begin.size()) == numWorlds + 1 && begin.front() == 0 && begin.back() == total &&
             std::is_sorted(begin.begin(), begin.end());
    };
    if (!spans(r.particles, numParticles) || !spans(r.triangles, numTriangles) ||
        !spans(r.edges, numEdges) || !spans(r.shapes, numShapes) || desc.worlds.empty())
      throw Error("internal error: the model's world ranges do not cover its items");
    for (int k = 0; k < numWorlds; ++k)
      for (int i = r.particles[size_t(k)]; i < r.particles[size_t(k) + 1]; ++i)
        if (desc.worlds[size_t(i)] != k)
          throw Error("internal error: particle " + std::to_string(i) + " is in world " +
                      std::to_string(k) + "'s range but carries world " +
                      std::to_string(desc.worlds[size_t(i)]));
    shapeSlots = 0;
    for (int k = 0; k < numWorlds; ++k)
      shapeSlots = std::max(shapeSlots, r.shapes[size_t(k) + 1] - r.shapes[size_t(k)]);
    shapeWorldBegin = DeviceBuffer<int>(device, r.shapes);
  } else {
    shapeSlots = numShapes;
  }
  if (!desc.worlds.empty() && (numWorlds > 1 || options.selfContact.enabled))
    worlds = DeviceBuffer<int>(device, desc.worlds);

  // Self-contact: rest shape and the topological filter (built once on the host).
  if (options.selfContact.enabled) {
    restPositions = DeviceBuffer<Vec3>(device, desc.positions);
    const ContactFilter filter = buildContactFilter(desc, options.selfContact.topologicalFilter);
    vertexFilterOffsets = DeviceBuffer<int>(device, filter.vertexTriangleOffsets);
    vertexFilterValues = DeviceBuffer<int>(device, filter.vertexTriangles);
    edgeFilterOffsets = DeviceBuffer<int>(device, filter.edgeEdgeOffsets);
    edgeFilterValues = DeviceBuffer<int>(device, filter.edgeEdges);
    std::vector<bool> held(invMass.size());
    for (size_t i = 0; i < held.size(); ++i) held[i] = invMass[i] == 0.0f;
    quietEdges = DeviceBuffer<unsigned char>(device, weft::quietEdges(desc, filter, held));
  }

  // Coloring
  colorOffsets = desc.coloring.colorOffsets;
  particlesByColor = DeviceBuffer<int>(device, desc.coloring.particlesByColor);

  // Shapes, with the particle side's contact material mixed in once (reference
  // init_body_particle_contacts: ke, kd arithmetic mean; mu geometric mean).
  std::vector<ShapeGeometry> geometry;
  std::vector<ShapeMotion> motions;
  std::vector<ContactMaterial> mixed;
  std::vector<float> margins;
  std::vector<Transform> samples;
  for (const ShapeDesc& s : desc.shapes) {
    geometry.push_back(s.geometry);
    ShapeMotion motion = s.motion;
    if (motion.type == MotionType::Sampled) {
      if (s.motionSamples.empty() || !(motion.sampleInterval > 0.0f))
        throw Error("shape '" + s.name + "' has sampled motion without samples or interval");
      motion.sampleOffset = int(samples.size());
      motion.sampleCount = int(s.motionSamples.size());
      samples.insert(samples.end(), s.motionSamples.begin(), s.motionSamples.end());
    }
    motions.push_back(motion);
    margins.push_back(s.margin);
    mixed.push_back({0.5f * (options.particleContact.ke + s.material.ke),
                     0.5f * (options.particleContact.kd + s.material.kd),
                     std::sqrt(options.particleContact.mu * s.material.mu)});
  }
  shapeGeometry = DeviceBuffer<ShapeGeometry>(device, geometry);
  shapeMotions = DeviceBuffer<ShapeMotion>(device, motions);
  motionSamples = DeviceBuffer<Transform>(device, samples);
  shapeMaterials = DeviceBuffer<ContactMaterial>(device, mixed);
  shapeMargins = DeviceBuffer<float>(device, margins);

  // Drivers
  std::vector<int> driven, drivenBy;
  std::vector<Vec3> initial;
  std::vector<ParticleDriver> driverList;
  for (const DriverDesc& d : desc.drivers) {
    for (int p : d.particles) {
      driven.push_back(p);
      drivenBy.push_back(int(driverList.size()));
      initial.push_back(desc.positions[p]);
    }
    driverList.push_back(d.driver);
  }
  numDriven = int(driven.size());
  drivenParticles = DeviceBuffer<int>(device, driven);
  drivenDriver = DeviceBuffer<int>(device, drivenBy);
  drivenInitial = DeviceBuffer<Vec3>(device, initial);
  drivers = DeviceBuffer<ParticleDriver>(device, driverList);
}

State::State(const Device& device, const ModelDesc& desc)
    : positions(device, desc.positions),
      velocities(device, desc.velocities),
      substep(device, size_t(1)) {}

Scratch::Scratch(const Device& device, const Model& model, const SolverOptions& options)
    : stepStart(device, size_t(model.numParticles)),
      inertia(device, size_t(model.numParticles)),
      displacements(device, size_t(model.numParticles)),
      shapePoses(device, size_t(2 * model.numShapes)),
      shapeContacts(device, size_t(model.numParticles) * size_t(model.shapeSlots)) {
  const SelfContactOptions& sc = options.selfContact;
  if (!sc.enabled) return;
  const size_t n = size_t(model.numParticles);
  anchors = DeviceBuffer<Vec3>(device, n);
  contactForces = DeviceBuffer<Vec3>(device, n);
  contactHessians = DeviceBuffer<Mat33>(device, n);
  truncation = DeviceBuffer<float>(device, std::vector<float>(n, 1.0f));
  SelfContactTopology topology;
  topology.numParticles = model.numParticles;
  topology.numTriangles = model.numTriangles;
  topology.numEdges = model.numEdges;
  topology.triangles = model.triangles.data();
  topology.edges = model.edges.data();
  topology.restPositions = model.restPositions.data();
  topology.worlds = model.worlds.empty() ? nullptr : model.worlds.data();
  if (model.numWorlds > 1) {
    topology.triangleWorldBegin = model.worldRanges.triangles;
    topology.edgeWorldBegin = model.worldRanges.edges;
  }
  topology.vertexFilterOffsets = model.vertexFilterOffsets.data();
  topology.vertexFilterValues = model.vertexFilterValues.data();
  topology.edgeFilterOffsets = model.edgeFilterOffsets.data();
  topology.edgeFilterValues = model.edgeFilterValues.data();
  topology.quietEdges = model.quietEdges.data();
  topology.triangleOffsets = model.triangleOffsets.data();
  topology.triangleEntries = model.triangleEntries.data();
  topology.edgeOffsets = model.edgeOffsets.data();
  topology.edgeEntries = model.edgeEntries.data();
  SelfContactDetectorSettings settings;
  settings.margin = sc.margin;
  settings.restExclusion = sc.restExclusion;
  settings.parallelEpsilon = sc.edgeParallelEpsilon;
  settings.traversal = sc.traversal;
  settings.vertexTriangleCapacity = sc.vertexTriangleCapacity;
  settings.edgeEdgeCapacity = sc.edgeEdgeCapacity;
  settings.triangleVertexCapacity = sc.triangleVertexCapacity;
  settings.reuseSlack = sc.reuseSlack;
  selfContact =
      std::make_unique<SelfContactDetector>(device, topology, settings, model.restPositions.data());
}

}  // namespace weft
