#include "collision/rigid_contacts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

namespace {

/// max(256, 4 x shapes) without int overflow (the constructor validates the count only after the
/// member initializers have run, so numShapes may be anything here).
int defaultRowCapacity(int numShapes) {
  return int(std::clamp<long long>(4LL * numShapes, 256, std::numeric_limits<int>::max()));
}

}  // namespace

std::vector<std::uint64_t> shapePairFilterKeys(const std::vector<std::pair<int, int>>& pairs) {
  std::vector<std::uint64_t> keys;
  keys.reserve(pairs.size());
  for (const auto& [a, b] : pairs) keys.push_back(shapePairKey(a, b));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<int> shapePairFilterStarts(const std::vector<std::uint64_t>& keys, int numShapes) {
  std::vector<int> starts(size_t(numShapes) + 1);
  size_t k = 0;
  for (int a = 0; a <= numShapes; ++a) {
    while (k < keys.size() && (keys[k] >> 32) < std::uint64_t(a)) ++k;
    starts[size_t(a)] = int(k);
  }
  return starts;
}

RigidContactDetector::RigidContactDetector(const Device& device, const RigidShapesView& shapes,
                                           const RigidBodiesView& bodies,
                                           const ShapePairFilterView& filter,
                                           const RigidContactDetectorSettings& settings,
                                           const Transform* initialBodyPoses)
    : device_(device),
      shapes_(shapes),
      bodies_(bodies),
      filter_(filter),
      settings_(settings),
      pairCapacity_(std::max(settings.pairCapacity, 1)),
      rowCapacity_(settings.rowCapacity > 0 ? settings.rowCapacity
                                            : defaultRowCapacity(shapes.numShapes)),
      status_(device, size_t(1)) {
  const int n = shapes.numShapes;
  if (n < 0 || bodies.numBodies < 0) throw Error("negative shape or body count");
  if (n >= (1 << 30) || bodies.numBodies >= (1 << 30))
    throw Error("the rigid contact detector holds fewer than 2^30 shapes and bodies");

  // Planes stay out of the tree (infinite); every other shape gets a tree slot in shape order.
  std::vector<ShapeGeometry> geometry(static_cast<size_t>(n));
  if (n > 0)
    detail::downloadBytes(device, geometry.data(), shapes.geometry,
                          size_t(n) * sizeof(ShapeGeometry));
  std::vector<int> world(static_cast<size_t>(n), 0);
  if (n > 0 && shapes.world)
    detail::downloadBytes(device, world.data(), shapes.world, size_t(n) * sizeof(int));
  std::vector<int> shapeLeaf(size_t(n), -1), leafShape, planes, worldLeafBegin = {0},
                                                                worldPlaneBegin = {0};
  for (int s = 0; s < n; ++s) {
    if (world[s] < int(worldLeafBegin.size()) - 1 || world[s] < 0)
      throw Error("shape " + std::to_string(s) + " is in world " + std::to_string(world[s]) +
                  ", after a shape of a later world: the worlds' shapes must come in ascending "
                  "order of world");
    while (world[s] > int(worldLeafBegin.size()) - 1) {
      worldLeafBegin.push_back(int(leafShape.size()));
      worldPlaneBegin.push_back(int(planes.size()));
    }
    if (geometry[s].type == ShapeType::Plane) {
      planes.push_back(s);
    } else {
      shapeLeaf[s] = int(leafShape.size());
      leafShape.push_back(s);
    }
  }
  worldLeafBegin.push_back(int(leafShape.size()));
  worldPlaneBegin.push_back(int(planes.size()));
  largestWorldTreeShapes_ = 0;
  for (size_t w = 0; w + 1 < worldLeafBegin.size(); ++w)
    largestWorldTreeShapes_ =
        std::max(largestWorldTreeShapes_, worldLeafBegin[w + 1] - worldLeafBegin[w]);
  numWorlds_ = int(worldLeafBegin.size()) - 1;
  if (numWorlds_ > 1) {
    worldLeafBegin_ = DeviceBuffer<int>(device, worldLeafBegin);
    worldPlaneBegin_ = DeviceBuffer<int>(device, worldPlaneBegin);
    std::vector<int> leafWorld(leafShape.size());
    for (size_t l = 0; l < leafShape.size(); ++l) leafWorld[l] = world[size_t(leafShape[l])];
    leafWorld_ = DeviceBuffer<int>(device, leafWorld);
  }
  if (usesAllPairsRuns()) {
    std::vector<int> runFirst;
    for (size_t w = 0; w + 1 < worldLeafBegin.size(); ++w)
      for (int first = worldLeafBegin[w]; first < worldLeafBegin[w + 1]; first += kAllPairsRunSlots)
        runFirst.push_back(first);
    runFirst_ = DeviceBuffer<int>(device, runFirst);
  }
  shapeLeaf_ = DeviceBuffer<int>(device, shapeLeaf);
  leafShape_ = DeviceBuffer<int>(device, leafShape);
  planeShapes_ = DeviceBuffer<int>(device, planes);
  worldPoses_ = DeviceBuffer<Transform>(device, size_t(n));
  leafLowers_ = DeviceBuffer<Vec3>(device, leafShape.size());
  leafUppers_ = DeviceBuffer<Vec3>(device, leafShape.size());
  if (settings.pairReuseMargin < 0.0f || !std::isfinite(settings.pairReuseMargin))
    throw Error("the pair reuse margin must be finite and >= 0");
  if (reusesPairs()) {  // (reusesPairs needs the tree-shape count: the boxes above)
    pairLowers_ = DeviceBuffer<Vec3>(device, leafShape.size());
    pairUppers_ = DeviceBuffer<Vec3>(device, leafShape.size());
  }
  stale_ = DeviceBuffer<int>(device, size_t(numWorlds_) + 1);
  stale_.zero();
  // With worlds, a forest: each world's tree shapes get a subtree of their own, and a shape's
  // query visits only its world's (kernels/lbvh.cuh), wherever the worlds are placed.
  bvh_ = std::make_unique<Lbvh>(device, int(leafShape.size()),
                                numWorlds_ > 1 ? worldLeafBegin : std::vector<int>{});
  pairItems_ = DeviceBuffer<int>(device, size_t(n) * size_t(pairCapacity_));
  pairHits_ = DeviceBuffer<int>(device, size_t(n) * size_t(pairCapacity_));
  pairCounts_ = DeviceBuffer<int>(device, size_t(n));
  pairCounts_.zero();  // a plane's stays 0 (the run broad phase writes only tree shapes')
  rowCounts_ = DeviceBuffer<int>(device, size_t(n) + 1);
  rowOffsets_ = DeviceBuffer<int>(device, size_t(n) + 1);
  rowCount_ = DeviceBuffer<int>(device, size_t(1));
  bodyCounts_ = DeviceBuffer<int>(device, size_t(bodies.numBodies) + 1);
  bodyOffsets_ = DeviceBuffer<int>(device, size_t(bodies.numBodies) + 1);
  // One for both sums (over shapes and over bodies).
  exclusiveSum_ = std::make_unique<ExclusiveSum>(device, std::max(n, bodies.numBodies) + 1);
  allocateRows();
  rebuildTree(initialBodyPoses);
}

void RigidContactDetector::allocateRows() {
  rows_ = DeviceBuffer<RigidContact>(device_, size_t(rowCapacity_));
  bodyRows_ = DeviceBuffer<int>(device_, 2 * size_t(rowCapacity_));
}

void RigidContactDetector::computeShapeBoxes(const Transform* bodyPoses, bool refreshPairBoxes,
                                             bool listsBuilt) {
  ShapePairBoxes pairBoxes;
  if (reusesPairs()) pairBoxes = pairBoxesView(refreshPairBoxes);
  launch(device_, shapes_.numShapes,
         ComputeShapeAabbs{shapes_, bodyPoses, shapeLeaf_.data(), worldPoses_.data(),
                           leafLowers_.data(), leafUppers_.data(), pairBoxes,
                           listsBuilt ? status() : nullptr});
}

ShapePairBoxes RigidContactDetector::pairBoxesView(bool refresh) {
  ShapePairBoxes boxes{pairLowers_.data(), pairUppers_.data(), settings_.pairReuseMargin, refresh,
                       stale_.data()};
  boxes.leafWorld = leafWorld_.empty() ? nullptr : leafWorld_.data();
  boxes.numWorlds = numWorlds_;
  return boxes;
}

void RigidContactDetector::rebuildTree(const Transform* bodyPoses) {
  computeShapeBoxes(bodyPoses, true, false);
  bvh_->build(pairLowers(), pairUppers());
  freshListsNeeded_ = true;
}

void RigidContactDetector::detect(const Transform* bodyPoses, TreeUpdate tree) {
  const int n = shapes_.numShapes;
  const int numBodies = bodies_.numBodies;
  // Boxes; whether this detection builds partner lists or may keep the last ones (then the
  // device decides: `stale` says whether a shape left its list box).
  const bool fresh = !reusesPairs() || tree == TreeUpdate::Rebuild || freshListsNeeded_;
  freshListsNeeded_ = false;
  const int* onlyIf = fresh ? nullptr : stale_.data();
  computeShapeBoxes(bodyPoses, fresh, true);
  if (onlyIf)
    launch(device_, numTreeShapes(),
           RefreshShapePairBoxes{pairBoxesView(false), leafLowers_.data(), leafUppers_.data(),
                                 status()});
  // Tree (none for few shapes: all pairs), over the boxes the lists are built from.
  if (!usesAllPairs()) {
    if (tree == TreeUpdate::Rebuild)
      bvh_->build(pairLowers(), pairUppers());
    else
      bvh_->refit(pairLowers(), pairUppers(), onlyIf ? onlyIf + numWorlds_ : nullptr);  // any
  }

  // Candidate pairs per shape.
  const ShapePairLists pairs = shapePairs();
  RigidBroadPhase query{bvh_->view(),
                        shapes_.body,
                        shapes_.geometry,
                        bodies_.invMass,
                        shapeLeaf_.data(),
                        leafShape_.data(),
                        pairLowers(),
                        pairUppers(),
                        planeShapes_.data(),
                        numPlanes(),
                        filter_,
                        pairs,
                        status(),
                        onlyIf};
  query.shapeWorld = shapes_.world;
  query.worldLeafBegin = worldLeafBegin_.empty() ? nullptr : worldLeafBegin_.data();
  query.worldPlaneBegin = worldPlaneBegin_.empty() ? nullptr : worldPlaneBegin_.data();
  if (usesAllPairsRuns())
    launchGroup(device_, int(runFirst_.size()),
                RigidBroadPhaseAllPairsRuns{query, runFirst_.data(), numTreeShapes()});
  else if (usesAllPairs())
    launchGroup(device_, n, RigidBroadPhaseAllPairs{query, numTreeShapes()});
  else if (settings_.cooperativeBroadPhase)
    launchGroup(device_, n, RigidBroadPhaseCooperative{query, pairHits_.data()});
  else
    launch(device_, n, query);

  // Narrow phase: count, place each shape's rows after the previous shapes', write (and count
  // each body's rows).
  const RigidNarrowPhaseInputs narrow{shapes_, worldPoses_.data(), pairs};
  rowCount_.zero();
  const int staleFlags = onlyIf ? numWorlds_ + 1 : 0;
  launchGroup(device_, std::max({n, numBodies + 1, staleFlags}),
              RigidNarrowPhaseCount{narrow, rowCounts_.data(), numBodies, bodyCounts_.data(),
                                    onlyIf ? stale_.data() : nullptr, staleFlags});
  (*exclusiveSum_)(rowCounts_.data(), rowOffsets_.data(), n + 1);
  launchGroup(device_, n,
              RigidNarrowPhase{narrow, bodyPoses, rowOffsets_.data(), rowCapacity_, rows_.data(),
                               rowCount_.data(), status(), bodies_.invMass, bodyCounts_.data()});

  // Per-body lists: placed by the counts, filled, each sorted.
  (*exclusiveSum_)(bodyCounts_.data(), bodyOffsets_.data(), numBodies + 1);
  launch(device_, rowCapacity_,
         FillBodyBodyContactLists{rows_.data(), rowCount_.data(), bodies_.invMass,
                                  bodyOffsets_.data(), bodyCounts_.data(), bodyRows_.data()});
  launch(device_, numBodies, SortBodyBodyContactLists{bodyOffsets_.data(), bodyRows_.data()});
}

std::vector<ContactCount> RigidContactDetector::counts(const RigidContactStatus& s) const {
  return {{"shape pairs", s.maxShapePairs, pairCapacity_},
          {"contact rows", s.maxContacts, rowCapacity_}};
}

void RigidContactDetector::resize(std::span<const int> capacities) {
  if (capacities[0] != pairCapacity_) {
    pairCapacity_ = capacities[0];
    freshListsNeeded_ = true;
    pairItems_ = DeviceBuffer<int>(device_, size_t(shapes_.numShapes) * size_t(pairCapacity_));
    pairHits_ = DeviceBuffer<int>(device_, size_t(shapes_.numShapes) * size_t(pairCapacity_));
  }
  if (capacities[1] != rowCapacity_) {
    rowCapacity_ = capacities[1];
    allocateRows();
  }
}

}  // namespace weft
