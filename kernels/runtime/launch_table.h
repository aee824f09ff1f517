// Launch tables: per-kernel block (or tile) sizes with their provenance, as JSON files under
// kernels/runtime/tables/ (one per GPU model), and how a launch size is resolved from them.
//
// Lookup order for kernel k in scene s run as N worlds (LaunchPolicy::resolve):
//   1. for N > 1, the batch entry scenes["s@W"][k] of the largest W <= N that the table has
//      (`weft tune-launch --worlds W`: a batch fills the GPU, and its kernels want other sizes
//      than one world's; docs/TUNING.md)
//   2. the table's per-scene entry scenes[s][k]   (a scene where the overall pick was slower)
//   3. the table's entry kernels[k]               (the overall recommendation)
//   4. the built-in default for the GPU's architecture (builtInLaunchSize)
// A batch that no tuned batch covers (no "s@W" with W <= N among the table's entries or its
// provenance's scenes) runs its tile kernels at the size found there, except that a launch which
// would take two waves of the GPU at that size and one at half of it runs at half
// (LaunchPolicy::narrowsToOneWave, launch.h): the same bits, and never slower where half the
// lanes take at most twice as long an item, which a tile's fixed tree guarantees. One world's
// size chosen for a few dozen items can otherwise leave a batch of them a second, nearly empty
// wave (cable_y_junction x 64 on the H100 table: 1.5x slower than at half the lanes;
// docs/TUNING.md).
// A table measured on another GPU is never applied silently: matchTable() says why not, and the
// caller falls back to the built-in defaults and tells the user (weft info shows it).
//
// File format ("weft-launch-table", version 1):
//   { "format": "weft-launch-table", "version": 1,
//     "gpu": { "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sm_count": 132 },
//     "provenance": { "driver": "...", "cuda_runtime": "13.0", "date": "2026-11-21",
//                     "commit": "abc1234", "scenes": ["poker_cards"], "generator": "..." },
//     "kernels": { "forward_step": { "block_size": 128, "default": 256, "speedup": 1.05 } },
//     "scenes":  { "poker_cards": { "forward_step": { "block_size": 64, ... } } } }
// Parsing is strict: unknown fields and unknown kernel names are errors that name the file and
// the field, because a misspelt kernel silently falling back to its default is how tuning is lost.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/runtime/kernel_ids.h"

namespace weft {

/// Which GPU a table was measured on (and which GPU we are running on).
struct GpuIdentity {
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  int ccMajor = 0;   // compute capability
  int ccMinor = 0;
  int smCount = 0;
  std::string describe() const;  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
};

struct TableEntry {
  int size = 0;          // block size, or tile size for tile kernels
  int defaultSize = 0;   // the built-in default it replaces (0: not recorded)
  double speedup = 0.0;  // measured default time / tuned time (0: not recorded)
};

struct TableProvenance {
  std::string driver;
  std::string cudaRuntime;
  std::string date;
  std::string commit;
  // The scenes, and batches ("scene@worlds"), the tuner measured: a batch listed here without an
  // entry of its own was tuned and runs what it inherits (batchEntries) because nothing won.
  std::vector<std::string> scenes;
  std::string generator;
};

struct LaunchTable {
  std::string sourcePath;  // the file it was loaded from ("" if made in memory)
  GpuIdentity gpu;
  TableProvenance provenance;
  std::map<KernelId, TableEntry> kernels;
  std::map<std::string, std::map<KernelId, TableEntry>> scenes;

  /// Parses JSON text; `sourceName` is used in error messages. Throws weft::Error.
  static LaunchTable parse(std::string_view jsonText, const std::string& sourceName);
  /// Reads and parses a file. Throws weft::Error naming the file (and the field, if malformed).
  static LaunchTable load(const std::string& path);
  std::string toJsonText() const;
  /// Writes atomically (temporary file, then rename), so a failed write leaves no partial table.
  void save(const std::string& path) const;
};

/// The file name (without ".json") of a GPU model's table in kernels/runtime/tables: its name in
/// lower case, every character but letters and digits '_' ("NVIDIA H200" -> "nvidia_h200").
std::string tableFileStem(std::string_view gpuName);

/// The per-scene key of a batch's entries: "cable_y_junction@4096".
std::string batchSceneKey(std::string_view scene, int worlds);
/// The world count of `key` if it is a batch key of `scene` ("scene@W", W digits); else 0.
int batchKeyWorlds(std::string_view key, std::string_view scene);
/// The batch entries of `table` that a run of `scene` as `worlds` worlds uses: those of the
/// largest W <= worlds (W > 1) the table has; null when none applies.
const std::map<KernelId, TableEntry>* batchEntries(const LaunchTable& table, std::string_view scene,
                                                   int worlds, int* tunedWorlds = nullptr);

/// Whether a table may be applied on `current`: same GPU name, compute capability and SM count.
struct TableMatch {
  bool applies = false;
  std::string reason;  // why (not), as a sentence
};
TableMatch matchTable(const LaunchTable& table, const GpuIdentity& current);

/// "unknown kernel 'forward_stepp' (did you mean forward_step? ...)": the closest names (edit
/// distance), not all of them, and where the full list is.
std::string unknownKernelMessage(std::string_view name);

/// Built-in default for an architecture: the reference's defaults (Warp: 256 threads for
/// elementwise kernels; 16 for the tile solve). Used when no table entry exists.
int builtInLaunchSize(KernelId id, int ccMajor, int ccMinor);

enum class LaunchSource { BatchEntry, SceneEntry, TableEntry, BuiltInDefault, Override };
std::string_view launchSourceName(LaunchSource source);

struct LaunchChoice {
  int size = 0;
  LaunchSource source = LaunchSource::BuiltInDefault;
};

/// The resolved launch size of every kernel; what launch() reads. Cheap to copy.
class LaunchPolicy {
 public:
  /// Built-in defaults for compute capability 9.0.
  LaunchPolicy();
  /// Resolves every kernel: batch entry (worlds > 1) -> per-scene entry -> table entry ->
  /// built-in default. `table` may be null; the caller has already decided (matchTable) that it
  /// applies to this GPU.
  static LaunchPolicy resolve(const LaunchTable* table, std::string_view scene, int ccMajor,
                              int ccMinor, int worlds = 1);

  const LaunchChoice& choice(KernelId id) const { return choices_[int(id)]; }
  int size(KernelId id) const { return choices_[int(id)].size; }
  /// Whether a launch of tile kernel `id` runs at half its size where that takes it from two
  /// waves to one (see the file comment): a batch no tuned batch covers, a size not overridden.
  bool narrowsToOneWave(KernelId id) const {
    return untunedBatch_ && launchKindOf(id) == LaunchKind::Tile &&
           choices_[int(id)].source != LaunchSource::Override;
  }
  /// Forces one kernel's size (tests, the tuner's sweep). Throws if the size is not valid for
  /// the kernel's launch kind.
  void setOverride(KernelId id, int size);

 private:
  std::array<LaunchChoice, kNumKernels> choices_;
  bool untunedBatch_ = false;  // worlds > 1 and no tuned batch of the scene up to that count
};

/// The tile size a launch runs at under LaunchPolicy::narrowsToOneWave: half of `size` when the
/// launch takes more than one wave at `size` and one at half (`waves(tile)`: the waves of the
/// launch at that tile size, 0 if unknown); else `size`. Tile sizes 16 and up have a half.
template <class Waves>
int oneWaveTileSize(int size, const Waves& waves) {
  if (size < 16) return size;
  const int full = waves(size);
  return full > 1 && waves(size / 2) == 1 ? size / 2 : size;
}

}  // namespace weft
