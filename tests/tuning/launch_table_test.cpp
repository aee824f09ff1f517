// Launch tables: JSON round trip, lookup order, GPU matching, selection, strict parsing.
#include "kernels/runtime/launch_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/table_selection.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const GpuIdentity kH100{"NVIDIA H100 80GB HBM3", 9, 0, 132};
const GpuIdentity kL40{"NVIDIA L40", 8, 9, 142};

LaunchTable sampleTable(const GpuIdentity& gpu, const std::string& date) {
  LaunchTable t;
  t.gpu = gpu;
  t.provenance = {"580.159.04", "13.0", date, "abc123", {"cloth_hanging"}, "test"};
  t.kernels[KernelId::forward_step] = {128, 256, 1.05};
  t.kernels[KernelId::solve_elasticity_tile] = {32, 16, 1.2};
  t.scenes["cloth_hanging"][KernelId::forward_step] = {64, 256, 1.07};
  return t;
}

/// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("weft_table_test_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text = "") const {
    const fs::path p = path_ / name;
    if (!text.empty()) std::ofstream(p) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string parseError(const std::string& text) {
  try {
    LaunchTable::parse(text, "my_table.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchTable, JsonRoundTripKeepsEveryField) {
  const LaunchTable a = sampleTable(kH100, "2026-11-21");
  const LaunchTable b = LaunchTable::parse(a.toJsonText(), "memory");
  EXPECT_EQ(b.gpu.name, a.gpu.name);
  EXPECT_EQ(b.gpu.ccMajor, 9);
  EXPECT_EQ(b.gpu.ccMinor, 0);
  EXPECT_EQ(b.gpu.smCount, 132);
  EXPECT_EQ(b.provenance.driver, "580.159.04");
  EXPECT_EQ(b.provenance.date, "2026-11-21");
  EXPECT_EQ(b.provenance.scenes, std::vector<std::string>{"cloth_hanging"});
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_EQ(b.kernels.at(KernelId::forward_step).size, 128);
  EXPECT_EQ(b.kernels.at(KernelId::forward_step).defaultSize, 256);
  EXPECT_DOUBLE_EQ(b.kernels.at(KernelId::forward_step).speedup, 1.05);
  EXPECT_EQ(b.scenes.at("cloth_hanging").at(KernelId::forward_step).size, 64);
  EXPECT_EQ(b.toJsonText(), a.toJsonText());
}

TEST(LaunchTable, SaveAndLoadFromFile) {
  TempDir dir;
  const std::string path = dir.file("h100.json");
  sampleTable(kH100, "2026-11-21").save(path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const LaunchTable t = LaunchTable::load(path);
  EXPECT_EQ(t.sourcePath, path);
  EXPECT_EQ(t.kernels.at(KernelId::solve_elasticity_tile).size, 32);
}

TEST(LaunchPolicy, LookupOrderIsSceneThenTableThenBuiltIn) {
  const LaunchTable t = sampleTable(kH100, "2026-11-21");
  const LaunchPolicy scene = LaunchPolicy::resolve(&t, "cloth_hanging", 9, 0);
  EXPECT_EQ(scene.choice(KernelId::forward_step).size, 64);
  EXPECT_EQ(scene.choice(KernelId::forward_step).source, LaunchSource::SceneEntry);
  EXPECT_EQ(scene.choice(KernelId::solve_elasticity_tile).size, 32);
  EXPECT_EQ(scene.choice(KernelId::solve_elasticity_tile).source, LaunchSource::TableEntry);
  EXPECT_EQ(scene.choice(KernelId::update_velocity).size,
            builtInLaunchSize(KernelId::update_velocity, 9, 0));
  EXPECT_EQ(scene.choice(KernelId::update_velocity).source, LaunchSource::BuiltInDefault);

  const LaunchPolicy other = LaunchPolicy::resolve(&t, "some_other_scene", 9, 0);
  EXPECT_EQ(other.choice(KernelId::forward_step).size, 128);
  EXPECT_EQ(other.choice(KernelId::forward_step).source, LaunchSource::TableEntry);

  const LaunchPolicy none = LaunchPolicy::resolve(nullptr, "cloth_hanging", 9, 0);
  for (KernelId id : allKernels()) {
    EXPECT_EQ(none.choice(id).source, LaunchSource::BuiltInDefault);
    EXPECT_TRUE(isValidLaunchSize(id, none.size(id))) << kernelName(id);
  }
}

TEST(LaunchPolicy, ABatchTakesTheEntriesOfTheLargestTunedBatchItFills) {
  LaunchTable t = sampleTable(kH100, "2026-11-25");
  t.scenes["cable_twist"][KernelId::solve_rigid_body_tile] = {32, 32, 1.0};
  t.scenes["cable_twist@16"][KernelId::solve_rigid_body_tile] = {16, 32, 1.2};
  t.scenes["cable_twist@256"][KernelId::solve_rigid_body_tile] = {8, 32, 1.9};
  t.scenes["cable_twist@x"][KernelId::solve_rigid_body_tile] = {64, 32, 1.0};      // not a count
  t.scenes["cable_twistx@1024"][KernelId::solve_rigid_body_tile] = {64, 32, 1.0};  // another
  const auto sizeAt = [&](int worlds) {
    return LaunchPolicy::resolve(&t, "cable_twist", 9, 0, worlds)
        .size(KernelId::solve_rigid_body_tile);
  };
  EXPECT_EQ(sizeAt(1), 32);  // one world: its own entry
  EXPECT_EQ(sizeAt(15), 32);
  EXPECT_EQ(sizeAt(16), 16);
  EXPECT_EQ(sizeAt(255), 16);
  EXPECT_EQ(sizeAt(256), 8);
  EXPECT_EQ(sizeAt(100000), 8);
  EXPECT_EQ(LaunchPolicy::resolve(&t, "cable_twist", 9, 0, 300)
                .choice(KernelId::solve_rigid_body_tile)
                .source,
            LaunchSource::BatchEntry);
  int tuned = -1;
  EXPECT_EQ(batchEntries(t, "cable_twist", 300, &tuned), &t.scenes.at("cable_twist@256"));
  EXPECT_EQ(tuned, 256);
  EXPECT_EQ(batchEntries(t, "cable_twist", 8, &tuned), nullptr);
  EXPECT_EQ(tuned, 0);
  EXPECT_EQ(batchSceneKey("cable_twist", 256), "cable_twist@256");
  EXPECT_EQ(batchKeyWorlds("cable_twist@256", "cable_twist"), 256);
  for (const char* notABatch :
       {"cable_twist", "cable_twist@", "cable_twist@x", "cable_twistx@4", "cable_twist@1234567890"})
    EXPECT_EQ(batchKeyWorlds(notABatch, "cable_twist"), 0) << notABatch;
  // A kernel without a batch entry falls back to the one-world chain.
  const LaunchPolicy batch = LaunchPolicy::resolve(&t, "cable_twist", 9, 0, 256);
  EXPECT_EQ(batch.choice(KernelId::forward_step).size, 128);
  EXPECT_EQ(batch.choice(KernelId::forward_step).source, LaunchSource::TableEntry);
  // The entries survive the file.
  const LaunchTable back = LaunchTable::parse(t.toJsonText(), "round trip");
  EXPECT_EQ(back.scenes.at("cable_twist@256").at(KernelId::solve_rigid_body_tile).size, 8);
}

// Which launches may narrow to one wave (LaunchPolicy::narrowsToOneWave): the tile kernels of a
// batch that no tuned batch covers, at sizes not overridden; and the size they then run at.
TEST(LaunchPolicy, OnlyUntunedBatchesNarrowTheirTilesToOneWave) {
  LaunchTable t = sampleTable(kH100, "2026-11-25");
  t.scenes["cable_y_junction"][KernelId::solve_rigid_body_tile] = {32, 32, 1.0};
  t.scenes["cable_y_junction@256"][KernelId::solve_rigid_body_tile] = {8, 32, 1.9};
  t.provenance.scenes.push_back("cable_y_junction@128");  // tuned, nothing won: no entries
  const auto narrows = [&](int worlds, KernelId id) {
    return LaunchPolicy::resolve(&t, "cable_y_junction", 9, 0, worlds).narrowsToOneWave(id);
  };
  EXPECT_FALSE(narrows(1, KernelId::solve_rigid_body_tile));  // one world: the tuned size
  EXPECT_TRUE(narrows(2, KernelId::solve_rigid_body_tile));
  EXPECT_TRUE(narrows(127, KernelId::solve_rigid_body_tile));
  EXPECT_TRUE(narrows(64, KernelId::solve_elasticity_tile));          // any tile kernel
  EXPECT_FALSE(narrows(64, KernelId::update_rigid_duals));            // elementwise
  EXPECT_FALSE(narrows(64, KernelId::solve_rigid_world_iterations));  // group
  EXPECT_FALSE(narrows(128, KernelId::solve_rigid_body_tile));        // the tuned @128 covers it
  EXPECT_FALSE(narrows(4096, KernelId::solve_rigid_body_tile));
  EXPECT_FALSE(narrows(4096, KernelId::solve_elasticity_tile));  // no entry, but a tuned batch
  EXPECT_TRUE(LaunchPolicy::resolve(nullptr, "cable_y_junction", 9, 0, 64)
                  .narrowsToOneWave(KernelId::solve_rigid_body_tile));  // no table at all
  LaunchPolicy overridden = LaunchPolicy::resolve(&t, "cable_y_junction", 9, 0, 64);
  overridden.setOverride(KernelId::solve_rigid_body_tile, 32);
  EXPECT_FALSE(overridden.narrowsToOneWave(KernelId::solve_rigid_body_tile));

  // Half the size only where that turns more than one wave into one.
  const auto waves = [](int full, int half) {
    return [=](int tile) { return tile == 32 ? full : tile == 16 ? half : 99; };
  };
  EXPECT_EQ(oneWaveTileSize(32, waves(2, 1)), 16);
  EXPECT_EQ(oneWaveTileSize(32, waves(3, 1)), 16);
  EXPECT_EQ(oneWaveTileSize(32, waves(1, 1)), 32);  // one wave already
  EXPECT_EQ(oneWaveTileSize(32, waves(4, 2)), 32);  // still two waves at half
  EXPECT_EQ(oneWaveTileSize(32, waves(2, 0)), 32);  // unknown
  EXPECT_EQ(oneWaveTileSize(32, waves(0, 1)), 32);
  EXPECT_EQ(oneWaveTileSize(8, [](int) { return 2; }), 8);  // no tile of 4 lanes
  EXPECT_EQ(oneWaveTileSize(1, [](int) { return 2; }), 1);
}

TEST(LaunchTable, TableForAnotherGpuDoesNotMatch) {
  const LaunchTable t = sampleTable(kL40, "2026-07-02");
  EXPECT_TRUE(matchTable(t, kL40).applies);
  const TableMatch m = matchTable(t, kH100);
  EXPECT_FALSE(m.applies);
  EXPECT_THAT(m.reason, HasSubstr("NVIDIA L40"));
  EXPECT_THAT(m.reason, HasSubstr("built-in defaults"));
  // Same name, different SM count (e.g. a cut-down part) is another GPU too.
  GpuIdentity smaller = kH100;
  smaller.smCount = 114;
  EXPECT_FALSE(matchTable(sampleTable(kH100, "x"), smaller).applies);
}

TEST(TableSelection, ExplicitTableForAnotherGpuIsNotAppliedAndWarns) {
  TempDir dir;
  const std::string path = dir.file("l40.json");
  sampleTable(kL40, "2026-07-02").save(path);
  const TableSelection s = selectLaunchTable(path, &kH100, "");
  EXPECT_FALSE(s.table.has_value());
  EXPECT_TRUE(s.warning);
  EXPECT_THAT(s.reason, HasSubstr(path));
  EXPECT_THAT(s.reason, HasSubstr("--launch-table"));
}

TEST(TableSelection, FlagBeatsEnvironmentBeatsFolder) {
  TempDir dir;
  const std::string flag = dir.file("flag.json"), env = dir.file("env.json");
  sampleTable(kH100, "2026-01-01").save(flag);
  sampleTable(kH100, "2026-01-02").save(env);
  fs::create_directories(dir.path() / "tables");
  sampleTable(kH100, "2026-12-31").save((dir.path() / "tables" / "h100.json").string());
  const std::string folder = (dir.path() / "tables").string();

  ::setenv("WEFT_LAUNCH_TABLE", env.c_str(), 1);
  EXPECT_EQ(selectLaunchTable(flag, &kH100, folder).path, flag);
  EXPECT_EQ(selectLaunchTable("", &kH100, folder).path, env);
  ::unsetenv("WEFT_LAUNCH_TABLE");
  const TableSelection s = selectLaunchTable("", &kH100, folder);
  ASSERT_TRUE(s.table.has_value());
  EXPECT_EQ(s.origin, "kernels/runtime/tables");
  EXPECT_EQ(s.table->provenance.date, "2026-12-31");
}

TEST(TableSelection, FolderSearchPicksNewestMatchingTable) {
  TempDir dir;
  sampleTable(kH100, "2026-10-01").save(dir.file("h100_old.json"));
  sampleTable(kH100, "2026-11-21").save(dir.file("h100_new.json"));
  sampleTable(kL40, "2026-12-31").save(dir.file("l40.json"));
  const std::string folder = dir.path().string();
  const TableSelection s = selectLaunchTable("", &kH100, folder);
  ASSERT_TRUE(s.table.has_value());
  EXPECT_EQ(s.table->provenance.date, "2026-11-21");
  GpuIdentity unknown{"Some GPU", 12, 0, 10};
  const TableSelection none = selectLaunchTable("", &unknown, folder);
  EXPECT_FALSE(none.table.has_value());
  EXPECT_FALSE(none.warning);
  EXPECT_THAT(none.reason, AllOf(HasSubstr("built-in defaults"), HasSubstr("weft tune-launch")));
}

TEST(TableSelection, CpuBackendUsesNoTable) {
  TempDir dir;
  const std::string path = dir.file("h100.json");
  sampleTable(kH100, "2026-11-21").save(path);
  const TableSelection s = selectLaunchTable(path, nullptr, "");
  EXPECT_FALSE(s.table.has_value());
  EXPECT_THAT(s.reason, HasSubstr("CPU backend"));
}

TEST(TableSelection, MissingOrMalformedTableIsAnError) {
  TempDir dir;
  try {
    selectLaunchTable(dir.file("missing.json"), &kH100, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.json"));
  }
  const std::string bad = dir.file("bad.json", "{ \"format\": ");
  EXPECT_THROW(selectLaunchTable(bad, &kH100, ""), Error);
  // The message says where the path came from: the flag or the environment variable.
  try {
    selectLaunchTable(bad, &kH100, "");
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--launch-table"));
  }
  ::setenv("WEFT_LAUNCH_TABLE", bad.c_str(), 1);
  try {
    selectLaunchTable("", &kH100, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.json"));
    EXPECT_THAT(e.what(), HasSubstr("WEFT_LAUNCH_TABLE"));
  }
  ::unsetenv("WEFT_LAUNCH_TABLE");
}

TEST(LaunchTable, MalformedTablesNameTheFileAndTheField) {
  const std::string good = sampleTable(kH100, "2026-11-21").toJsonText();
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };

  EXPECT_THAT(parseError("{ not json"), HasSubstr("my_table.json is not valid JSON"));
  EXPECT_THAT(parseError("[]"), HasSubstr("expected a JSON object"));

  const std::string unknownKernel = parseError(replaced("\"forward_step\"", "\"forward_stepp\""));
  EXPECT_THAT(unknownKernel, HasSubstr("my_table.json"));
  EXPECT_THAT(unknownKernel, HasSubstr("kernels.forward_stepp"));
  EXPECT_THAT(unknownKernel, HasSubstr("unknown kernel"));
  EXPECT_THAT(unknownKernel, HasSubstr("did you mean forward_step?"));  // the closest name

  EXPECT_THAT(parseError(replaced("\"block_size\": 128", "\"block_size\": 48")),
              HasSubstr("kernels.forward_step.block_size"));
  EXPECT_THAT(parseError(replaced("\"block_size\": 32", "\"block_size\": 512")),
              HasSubstr("tile size"));
  EXPECT_THAT(parseError(replaced("\"block_size\": 128", "\"block_size\": \"128\"")),
              HasSubstr("expected an integer"));
  // 2^32 + 128 would wrap to a valid 128 at 32 bits; it is out of range, as are huge negatives.
  EXPECT_THAT(parseError(replaced("\"block_size\": 128", "\"block_size\": 4294967424")),
              HasSubstr("4294967424 is out of range"));
  EXPECT_THAT(parseError(replaced("\"block_size\": 128", "\"block_size\": -4294967168")),
              HasSubstr("out of range"));
  EXPECT_THAT(parseError(replaced("\"speedup\": 1.05", "\"speedup\": -1")), HasSubstr("speedup"));
  EXPECT_THAT(parseError(replaced("\"sm_count\": 132", "\"smcount\": 132")),
              HasSubstr("gpu.smcount"));
  EXPECT_THAT(
      parseError(replaced("\"compute_capability\": \"9.0\"", "\"compute_capability\": \"nine\"")),
      HasSubstr("gpu.compute_capability"));
  EXPECT_THAT(parseError(replaced("\"version\": 1", "\"version\": 7")), HasSubstr("version"));
  EXPECT_THAT(parseError(replaced("\"kernels\"", "\"kernel\"")), HasSubstr("kernel"));
  EXPECT_THAT(parseError(replaced("\"forward_step\": {", "\"forward_step\": {\"blocksize\": 1, ")),
              HasSubstr("kernels.forward_step.blocksize"));
}

// The tables that ship (kernels/runtime/tables, one per GPU model measured: the H100 and the
// H200 so far): each loads, is named as `weft tune-launch` names it (the GPU's name, lower case,
// every other character '_'), applies to the GPU it was measured on, and keys its batch entries
// "scene@W" with W > 1.
TEST(LaunchTable, FileStemIsTheGpuNameInLowerCaseWithUnderscores) {
  EXPECT_EQ(tableFileStem("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(tableFileStem("NVIDIA H200"), "nvidia_h200");
  EXPECT_EQ(tableFileStem("NVIDIA GeForce RTX 4090"), "nvidia_geforce_rtx_4090");
}

TEST(LaunchTable, EveryShippedTableLoadsAndIsNamedAfterItsGpu) {
  const fs::path folder = fs::path(WEFT_SOURCE_DIR) / "kernels" / "runtime" / "tables";
  int tables = 0;
  for (const auto& file : fs::directory_iterator(folder)) {
    if (file.path().extension() != ".json") continue;
    ++tables;
    SCOPED_TRACE(file.path().string());
    const LaunchTable t = LaunchTable::load(file.path().string());
    EXPECT_EQ(file.path().stem().string(), tableFileStem(t.gpu.name));
    EXPECT_TRUE(matchTable(t, t.gpu).applies);
    EXPECT_FALSE(t.provenance.date.empty());
    EXPECT_FALSE(t.provenance.commit.empty());
    EXPECT_FALSE(t.kernels.empty());
    for (const auto& [key, entries] : t.scenes) {
      EXPECT_FALSE(entries.empty()) << key;
      if (const size_t at = key.find('@'); at != std::string::npos) {
        EXPECT_GT(at, 0u) << key;
        EXPECT_GT(std::stoi(key.substr(at + 1)), 1) << key;
      }
    }
  }
  EXPECT_GE(tables, 2);
}

}  // namespace
}  // namespace weft
