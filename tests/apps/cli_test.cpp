// The weft command line, run in-process: outputs and exit codes. Bad input, class by class, is in
// bad_input_test.cpp.
#include "apps/commands.h"
#include "apps/html_writer.h"
#include "apps/reference_figures.h"
#include "cli_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::cli;
using test::CliResult;
using test::readFile;
using test::writeFile;

class CliTest : public test::TempFolderTest {};

TEST_F(CliTest, ScenesListsEverySceneWithItsSize) {
  const CliResult r = cli({"scenes"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cloth_hanging"));
  EXPECT_THAT(r.out, HasSubstr("1089 particles"));
  EXPECT_THAT(r.out, HasSubstr("240 frames"));
  // Every scene option, with its default, and which scenes take a mesh.
  EXPECT_THAT(r.out, HasSubstr("--scene-option layers=10  layers of cables"));
  EXPECT_THAT(r.out, HasSubstr("--scene-option shear=1e4"));
  EXPECT_THAT(r.out, HasSubstr("--scene-option welded=1"));
  EXPECT_THAT(r.out, HasSubstr("--scene-option materials=held"));
  EXPECT_THAT(r.out, HasSubstr("--mesh FILE.obj  replaces the cloth"));
}

TEST_F(CliTest, ASceneOptionTakesOneValueSoTheSceneMayFollowIt) {
  const CliResult r = cli({"run", "--scene-option", "shear=2e4", "cable_cantilever", "--device",
                           "cpu", "--frames", "1", "--format", "none"});
  EXPECT_NE(r.code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("weft run cable_cantilever"));
}

// cloth_hanging's --mesh is placed by the --mesh-* flags and held at its extreme-x vertices where
// it is placed (frame 0 is the initial state).
TEST_F(CliTest, ClothHangingPlacesItsMeshByTheMeshFlags) {
  writeFile(path("tri.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const CliResult r = cli({"run",
                           "cloth_hanging",
                           "--device",
                           "cpu",
                           "--frames",
                           "2",
                           "--format",
                           "obj",
                           "--out",
                           path("out"),
                           "--mesh",
                           path("tri.obj"),
                           "--mesh-scale",
                           "2",
                           "--mesh-rotate",
                           "0",
                           "0",
                           "90",
                           "--mesh-translate",
                           "0",
                           "0",
                           "0.5"});
  EXPECT_NE(r.code, kExitError) << r.err;
  // (1,0,0) scaled by 2 and turned 90° about z lands at (0,2), (0,1,0) at (−2,0); all at z 0.5.
  const std::string first = readFile(path("out/cloth_hanging_00000.obj"));
  EXPECT_THAT(first, HasSubstr("v 0 0 0.5\n"));
  EXPECT_THAT(first, ::testing::ContainsRegex("\nv [-0-9.e]+ 2 0.5\n"));
  EXPECT_THAT(first, ::testing::ContainsRegex("\nv -2 [-0-9.e]+ 0.5\n"));
  // The vertex of smallest x as placed, (−2,0), is held; in the file it had x = 0, not the least.
  const std::string last = readFile(path("out/cloth_hanging_00002.obj"));
  EXPECT_THAT(last, ::testing::ContainsRegex("\nv -2 [-0-9.e]+ 0.5\n"));
}

// A shorter run into the same folder leaves only its own OBJ frames, and says what it removed;
// files of other names stay.
TEST_F(CliTest, ObjFramesOfAnEarlierRunAreReplacedNotMixedIn) {
  const std::vector<std::string> run{"run",      "cloth_hanging", "--device", "cpu",
                                     "--format", "obj",           "--out",    path("out")};
  auto args = run;
  args.insert(args.end(), {"--frames", "3"});
  ASSERT_NE(cli(args).code, kExitError);
  writeFile(path("out/cloth_hanging_notes.obj"), "not a frame");
  writeFile(path("out/cloth_fold_00007.obj"), "another scene's frame");
  args = run;
  args.insert(args.end(), {"--frames", "1"});
  const CliResult r = cli(args);
  ASSERT_NE(r.code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("removed 4 OBJ frames of an earlier run (cloth_hanging_NNNNN.obj)"));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(path("out"))) names.insert(e.path().filename());
  EXPECT_EQ(names, (std::set<std::string>{"cloth_hanging_00000.obj", "cloth_hanging_00001.obj",
                                          "cloth_hanging_notes.obj", "cloth_fold_00007.obj"}));
}

TEST_F(CliTest, RunWritesUsdaAndJsonSummary) {
  const CliResult r = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "3", "--out",
                           path("frames"), "--summary", path("summary.json")});
  EXPECT_TRUE(r.code == kExitOk || r.code == kExitCheckFailed) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("us/substep"));

  const auto summary = nlohmann::json::parse(readFile(path("summary.json")));
  EXPECT_EQ(summary["scene"], "cloth_hanging");
  EXPECT_EQ(summary["frames"], 3);
  EXPECT_EQ(summary["substeps_per_frame"], 10);
  EXPECT_EQ(summary["backend"], "cpu");
  EXPECT_GT(summary["us_per_substep_median"].get<double>(), 0.0);
  EXPECT_EQ(summary["checks"]["finite"], true);
  EXPECT_EQ(summary["checks"]["above_ground"], true);
  EXPECT_TRUE(summary["checks"].contains("settled"));
  EXPECT_EQ(summary["all_checks_pass"], r.code == kExitOk);
  EXPECT_TRUE(summary["diverged"].is_null());

  const std::string usda = readFile(path("frames/cloth_hanging.usda"));
  EXPECT_EQ(usda.rfind("#usda 1.0", 0), 0u);
  EXPECT_THAT(usda, HasSubstr("endTimeCode = 3 "));
  EXPECT_THAT(usda, HasSubstr("timeCodesPerSecond = 60"));
  EXPECT_THAT(usda, HasSubstr("point3f[] points.timeSamples"));
  for (int frame = 0; frame <= 3; ++frame)
    EXPECT_THAT(usda, HasSubstr("            " + std::to_string(frame) + ": [("));
  // Each time sample holds every particle.
  const size_t sample = usda.find("            1: [");
  const size_t end = usda.find('\n', sample);
  const std::string line = usda.substr(sample, end - sample);
  EXPECT_EQ(std::count(line.begin(), line.end(), '('), 1089);
}

/// The JSON block of a page `weft run --format html` wrote.
nlohmann::json pageMeta(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"weft-meta\">";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t end = page.find("</script>", begin);
  return nlohmann::json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

/// Bytes of the base64 block of such a page.
size_t pageDataBytes(const std::string& page) {
  const std::string open = "<script type=\"application/octet-stream\" id=\"weft-data\">\n";
  const size_t begin = page.find(open) + open.size();
  const size_t end = page.find("\n</script>", begin);
  const std::string text = page.substr(begin, end - begin);
  const size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
  return text.size() / 4 * 3 - padding;
}

TEST_F(CliTest, RunWritesAnHtmlPlayerOfClothAndBodies) {
  if (!htmlViewerAvailable()) {
    const CliResult r = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "1", "--format",
                             "html", "--out", path("page")});
    EXPECT_EQ(r.code, kExitError);
    EXPECT_THAT(r.err, HasSubstr("apt-get install libjs-three"));
    GTEST_SKIP() << "this build has no HTML viewer (three.js was not found when configured)";
  }
  const CliResult cloth = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "3",
                               "--format", "html", "--out", path("page")});
  // Three frames are too few for the scene's "settled" check: exit 1, the page written all the
  // same.
  ASSERT_EQ(cloth.code, kExitCheckFailed) << cloth.out << cloth.err;
  EXPECT_THAT(cloth.out, HasSubstr("output        " + path("page/cloth_hanging.html")));
  const std::string page = readFile(path("page/cloth_hanging.html"));
  EXPECT_THAT(page, HasSubstr("REVISION=\"111\""));  // three.js is inside: no network needed
  const nlohmann::json meta = pageMeta(page);
  EXPECT_EQ(meta["frames"], 4);  // frame 0 and three more
  EXPECT_EQ(meta["cloth"]["particles"], 1089);
  EXPECT_EQ(meta["frameMs"].size(), 3u);
  EXPECT_THAT(meta["summary"]["text"].get<std::string>(), HasSubstr("pass finite"));
  EXPECT_THAT(meta["summary"]["text"].get<std::string>(), HasSubstr("FAIL settled"));
  EXPECT_THAT(meta["summary"]["checks"].get<std::string>(), HasSubstr("FAIL: settled ("));
  // Triangles (uint32 × 3), then four frames of 16-bit positions, padded to 4 bytes.
  EXPECT_EQ(pageDataBytes(page), 2048u * 12u + (1089u * 6u * 4u + 3u) / 4u * 4u);
  // The quantization box holds the cloth's start: x in [-0.8, 0.8], y in [0, 1.6] m at z = 1.2 m.
  const float start[2][3] = {{-0.8f, 0.0f, 1.2f}, {0.8f, 1.6f, 1.2f}};
  for (int a = 0; a < 3; ++a) {
    EXPECT_LE(meta["box"]["lo"][a].get<float>(), start[0][a] + 1e-6f) << a;
    EXPECT_GE(meta["box"]["hi"][a].get<float>(), start[1][a] - 1e-6f) << a;
  }

  const CliResult cable = cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "2",
                               "--format", "html", "--out", path("page")});
  ASSERT_EQ(cable.code, kExitOk) << cable.out << cable.err;
  const std::string cablePage = readFile(path("page/cable_y_junction.html"));
  const nlohmann::json cableMeta = pageMeta(cablePage);
  EXPECT_EQ(cableMeta["bodies"]["count"], 60);
  EXPECT_EQ(cableMeta["bodies"]["shapes"].size(), 60u);  // a capsule per segment
  EXPECT_EQ(cableMeta["bodies"]["shapes"][0][1], "capsule");
  EXPECT_THAT(cableMeta["summary"]["checks"].get<std::string>(), testing::EndsWith("checks pass"));
  // Per frame and body: uint16 × 3 positions, then int16 × 4 orientations.
  EXPECT_EQ(pageDataBytes(cablePage), 3u * 60u * 6u + 3u * 60u * 8u);
}

TEST_F(CliTest, ViewMakesThePlayerOfAUsdaOrOfObjFrames) {
  if (!htmlViewerAvailable()) GTEST_SKIP() << "this build has no HTML viewer";
  // Cloth with a shape (the ground) and bodies, each from the .usda weft run wrote.
  ASSERT_NE(
      cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "2", "--out", path("usda")}).code,
      kExitError);
  ASSERT_EQ(
      cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "2", "--out", path("usda")})
          .code,
      kExitOk);
  CliResult r = cli({"view", path("usda/cloth_hanging.usda"), "-o", path("cloth.html")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("frames        3 at 60 fps"));
  nlohmann::json meta = pageMeta(readFile(path("cloth.html")));
  EXPECT_EQ(meta["frames"], 3);
  EXPECT_EQ(meta["cloth"]["particles"], 1089);
  EXPECT_EQ(meta["cloth"]["triangles"], 2048);
  ASSERT_EQ(meta["shapes"].size(), 1u);
  EXPECT_EQ(meta["shapes"][0]["type"], "plane");

  r = cli({"view", path("usda/cable_y_junction.usda"), "-o", path("cable.html")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  meta = pageMeta(readFile(path("cable.html")));
  EXPECT_EQ(meta["frames"], 3);
  EXPECT_EQ(meta["bodies"]["count"], 60);
  EXPECT_EQ(meta["bodies"]["shapes"].size(), 60u);

  // A folder of OBJ frames.
  ASSERT_NE(cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "2", "--format", "obj",
                 "--out", path("obj")})
                .code,
            kExitError);
  r = cli({"view", path("obj"), "-o", path("obj.html"), "--fps", "30"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  meta = pageMeta(readFile(path("obj.html")));
  EXPECT_EQ(meta["frames"], 3);
  EXPECT_EQ(meta["fps"], 30.0);
  EXPECT_EQ(meta["cloth"]["particles"], 1089);
  // One frame is not a run; a gap in the numbering would show later frames at the wrong times.
  r = cli({"view", path("obj/cloth_hanging_00001.obj"), "-o", path("x.html")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("is one OBJ frame: give the folder"));
  fs::remove(path("obj/cloth_hanging_00001.obj"));
  r = cli({"view", path("obj"), "-o", path("x.html")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("frame 1 (cloth_hanging_00001.obj) is missing"));

  // What cannot be read is an error that names it.
  r = cli({"view", path("missing.usda"), "-o", path("x.html")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("missing.usda does not exist"));
  writeFile(path("not.usda"), "hello\n");
  r = cli({"view", path("not.usda"), "-o", path("x.html")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("not a USD ASCII file"));
  EXPECT_FALSE(fs::exists(path("x.html")));
  // A file cut short is refused, not drawn with a partial last frame: cut inside the cloth's last
  // frame of points, and inside the bodies' samples.
  for (const std::string scene : {"cloth_hanging", "cable_y_junction"}) {
    const std::string whole = readFile(path("usda/" + scene + ".usda"));
    const size_t cut = scene == "cloth_hanging" ? whole.find("2: [") + 2000 : whole.size() * 2 / 3;
    writeFile(path("cut.usda"), whole.substr(0, cut));
    r = cli({"view", path("cut.usda"), "-o", path("x.html")});
    EXPECT_EQ(r.code, kExitError) << scene;
    EXPECT_THAT(r.err, ::testing::AnyOf(HasSubstr("the file is incomplete"),
                                        HasSubstr("is incomplete or was edited")))
        << scene;
    EXPECT_FALSE(fs::exists(path("x.html")));
  }
}

TEST_F(CliTest, RunCableSceneWritesBodyPosesAndSummary) {
  const CliResult r = cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "2", "--out",
                           path("frames"), "--summary", path("summary.json")});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("60 bodies, 59 joints"));
  const auto summary = nlohmann::json::parse(readFile(path("summary.json")));
  EXPECT_EQ(summary["scene"], "cable_y_junction");
  EXPECT_EQ(summary["frames"], 2);
  EXPECT_EQ(summary["bodies"], 60);
  EXPECT_EQ(summary["substeps_per_frame"], 20);
  EXPECT_EQ(summary["checks"]["pinned"], true);
  EXPECT_EQ(summary["checks"]["joints_not_torn"], true);
  EXPECT_EQ(summary["checks"]["contacts_complete"], true);
  // The joint graph's connectivity is fixed by construction: information, not a check.
  EXPECT_FALSE(summary["checks"].contains("connected"));
  EXPECT_THAT(summary["information"]["connected"].get<std::string>(),
              HasSubstr("jointed groups: 1"));
  EXPECT_THAT(r.out, HasSubstr("info          connected: jointed groups: 1"));
  EXPECT_EQ(summary["all_checks_pass"], true);
  const std::string usda = readFile(path("frames/cable_y_junction.usda"));
  EXPECT_EQ(usda.rfind("#usda 1.0", 0), 0u);
  EXPECT_THAT(usda, HasSubstr("endTimeCode = 2"));
  EXPECT_THAT(usda, HasSubstr("timeSamples"));
}

// The iterations launched per world give the bits of the launches per color, and the run says
// which it took.
TEST_F(CliTest, RunIterationLaunchesPerWorldOrPerColorGiveTheSameWorlds) {
  std::vector<nlohmann::json> summaries;
  for (const std::string mode : {"per-color", "per-world"}) {
    const CliResult r =
        cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "3", "--worlds", "2",
             "--iteration-launches", mode, "--format", "none", "--summary", path(mode + ".json")});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("each world's iterations in one launch") != std::string::npos,
              mode == "per-world")
        << r.out;
    summaries.push_back(nlohmann::json::parse(readFile(path(mode + ".json"))));
    EXPECT_EQ(summaries.back()["iteration_launches"], mode);
  }
  EXPECT_EQ(summaries[0]["world_state_hashes"], summaries[1]["world_state_hashes"]);
  EXPECT_EQ(summaries[0]["world_state_hashes"].size(), 2u);
}

TEST_F(CliTest, RunManyWorldsJudgesEachWorldAndCountsThem) {
  const CliResult r = cli({"run", "cable_cantilever", "--device", "cpu", "--frames", "150",
                           "--worlds", "3", "--scene-option", "shear=1e4,1e4,1e5", "--format",
                           "none", "--summary", path("summary.json")});
  // World 2's stiffer cable does not settle to its statics in the scene's five iterations.
  EXPECT_EQ(r.code, kExitCheckFailed) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("60 bodies"));
  EXPECT_THAT(r.out, HasSubstr("worlds        3 in one model"));
  EXPECT_THAT(r.out, HasSubstr("shear=1e4,1e4,1e5 (item k mod 3 for world k)"));
  EXPECT_THAT(r.out, HasSubstr("FAIL tip_deflection: 2/3 worlds pass (failing: 2); world 2:"));
  EXPECT_THAT(r.out, HasSubstr("MB per world"));
  const auto summary = nlohmann::json::parse(readFile(path("summary.json")));
  EXPECT_EQ(summary["bodies"], 60);
  EXPECT_EQ(summary["worlds"]["count"], 3);
  EXPECT_EQ(summary["worlds"]["checks_passing"]["tip_deflection"], 2);
  EXPECT_EQ(summary["worlds"]["checks_failing_worlds"]["tip_deflection"],
            nlohmann::json::array({2}));
  EXPECT_EQ(summary["worlds"]["scene_options_per_world"][2]["shear"], "1e5");
  EXPECT_GT(summary["worlds"]["megabytes_per_world"].get<double>(), 0.0);
  EXPECT_EQ(summary["all_checks_pass"], false);
  // A spacing or a list needs worlds.
  EXPECT_EQ(
      cli({"run", "cable_y_junction", "--device", "cpu", "--world-spacing", "1", "0", "0"}).code,
      kExitError);
  EXPECT_EQ(cli({"run", "cable_cantilever", "--device", "cpu", "--scene-option", "shear=1:2"}).code,
            kExitError);
}

TEST_F(CliTest, RunManyWorldsOfACloth) {
  const CliResult r =
      cli({"run", "cloth_fold", "--device", "cpu", "--frames", "2", "--worlds", "2",
           "--scene-option", "cells=4,6", "--format", "none", "--summary", path("summary.json")});
  ASSERT_NE(r.code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("worlds        2 in one model"));
  EXPECT_THAT(r.out, HasSubstr("model         74 particles"));  // 5 x 5 + 7 x 7
  EXPECT_THAT(r.out, HasSubstr("no_self_intersections: 2/2 worlds pass"));
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("summary.json")));
  EXPECT_EQ(summary["worlds"]["count"], 2);
  EXPECT_EQ(summary["worlds"]["scene_options_per_world"][1]["cells"], "6");
  EXPECT_EQ(summary["self_intersections_per_world"], nlohmann::json::array({0, 0}));
  EXPECT_EQ(summary["worlds"]["checks_passing"]["no_self_intersections"], 2);
}

TEST_F(CliTest, ClothWorldsAreCheckedWhereTheyWouldBeAlone) {
  // World 1 is 50 m along x, outside the scene's box: its checks see it moved back.
  const CliResult r = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "1", "--worlds",
                           "2", "--world-spacing", "50", "0", "0", "--format", "none"});
  ASSERT_NE(r.code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("worlds        2 in one model, world k moved by k x (50, 0, 0) m"));
  EXPECT_THAT(r.out, HasSubstr("pass bounded: 2/2 worlds pass"));
}

TEST_F(CliTest, ConvergenceRecordsEveryIterationOfEverySubstep) {
  const CliResult r =
      cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "2", "--format", "none",
           "--convergence-plot", path("plots/convergence.svg"), "--summary", path("summary.json")});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("convergence   largest body step per iteration, median over 40 "
                               "substeps"));
  const auto c = nlohmann::json::parse(readFile(path("summary.json")))["convergence"];
  EXPECT_EQ(c["iterations"], 5);
  ASSERT_EQ(c["translation_step_m"].size(), 40u);  // 2 frames x 20 substeps
  ASSERT_EQ(c["rotation_step_rad"].size(), 40u);
  ASSERT_EQ(c["median_translation_step_m"].size(), 5u);
  for (const auto& substep : c["translation_step_m"]) {
    ASSERT_EQ(substep.size(), 5u);
    for (const auto& v : substep) EXPECT_GE(v.get<double>(), 0.0);
  }
  // The sweeps move the hanging cable less and less within a substep.
  const auto& median = c["median_translation_step_m"];
  EXPECT_GT(median[0].get<double>(), 0.0);
  EXPECT_LT(median[4].get<double>(), median[0].get<double>());
  // The plot: both series, five points each.
  const std::string svg = readFile(path("plots/convergence.svg"));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("cable_y_junction: convergence of the rigid solve"));
  EXPECT_THAT(svg, HasSubstr("over 40 substeps"));
  size_t points = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++points;
  EXPECT_EQ(points, 10u);
  // Without the flag the summary has no record; for a cloth scene the flag is refused.
  EXPECT_EQ(cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "1", "--format", "none",
                 "--summary", path("plain.json")})
                .code,
            kExitOk);
  EXPECT_FALSE(nlohmann::json::parse(readFile(path("plain.json"))).contains("convergence"));
  // --iterations overrides the scene's count, for the record too.
  const CliResult more =
      cli({"run", "cable_y_junction", "--device", "cpu", "--frames", "1", "--format", "none",
           "--iterations", "12", "--convergence", "--summary", path("more.json")});
  EXPECT_EQ(more.code, kExitOk) << more.out << more.err;
  EXPECT_THAT(more.out, HasSubstr("x 12 iterations"));
  const auto m = nlohmann::json::parse(readFile(path("more.json")));
  EXPECT_EQ(m["iterations"], 12);
  EXPECT_EQ(m["convergence"]["translation_step_m"][0].size(), 12u);
}

TEST_F(CliTest, SceneOptionsAreCheckedAndApplied) {
  CliResult r = cli({"run", "cable_pile", "--device", "cpu", "--frames", "1", "--format", "none",
                     "--scene-option", "layers=1", "--scene-option", "lanes=2"});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("80 bodies"));
  // (bad options: tests/apps/bad_input_test.cpp)
  r = cli({"run", "cable_twist", "--device", "cpu", "--format", "obj", "--out", path("obj")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_FALSE(fs::exists(path("obj")));
}

TEST_F(CliTest, RunWritesObjPerFrame) {
  const CliResult r = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "2", "--out",
                           path("objs"), "--format", "obj"});
  EXPECT_TRUE(r.code == kExitOk || r.code == kExitCheckFailed) << r.err;
  for (const char* name : {"cloth_hanging_00000.obj", "cloth_hanging_00002.obj"}) {
    const std::string obj = readFile(path(std::string("objs/") + name));
    EXPECT_EQ(std::count(obj.begin(), obj.end(), 'v'), 1089) << name;
    EXPECT_THAT(obj, HasSubstr("\nf 1 2 34\n"));
  }
}

// A frame that runs long (a huge model's) prints a line while it runs instead of nothing until it
// ends; the interval is shortened here (WEFT_HEARTBEAT_SECONDS) so that a CPU frame is long.
TEST_F(CliTest, ALongFrameSaysItIsStillRunning) {
  setenv("WEFT_HEARTBEAT_SECONDS", "0.05", 1);
  ::testing::internal::CaptureStderr();
  const CliResult r = cli({"run", "cloth_fold", "--device", "cpu", "--frames", "1", "--format",
                           "none", "--scene-option", "cells=80"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("WEFT_HEARTBEAT_SECONDS");
  ASSERT_GT(r.seconds, 0.2) << "the frame must outlast the heartbeat for the test to mean anything";
  EXPECT_THAT(err, HasSubstr("weft run cloth_fold: frame 1 of 1 still running"));
  EXPECT_THAT(err, HasSubstr("Ctrl-C stops the run after it"));
  // Fast frames say nothing of the kind (the default interval is 10 s).
  ::testing::internal::CaptureStderr();
  cli({"run", "cloth_fold", "--device", "cpu", "--frames", "1", "--format", "none",
       "--scene-option", "cells=4"});
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), ::testing::Not(HasSubstr("still running")));
}

// Half a second in, the cloth is mid-swing: the run completes, its "settled" check fails, and
// the exit code says so.
TEST_F(CliTest, FailedCheckGivesExitCodeOne) {
  const CliResult r = cli({"run", "cloth_hanging", "--device", "cpu", "--frames", "30", "--format",
                           "none", "--summary", path("s.json")});
  EXPECT_EQ(r.code, kExitCheckFailed) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL settled"));
  const auto summary = nlohmann::json::parse(readFile(path("s.json")));
  EXPECT_EQ(summary["checks"]["settled"], false);
  EXPECT_EQ(summary["all_checks_pass"], false);
}

TEST_F(CliTest, CudaWithoutGpuIsAClearError) {
  if (visibleCudaDevices() > 0) GTEST_SKIP() << "a GPU is visible";
  const CliResult r = cli({"run", "cloth_hanging", "--device", "cuda", "--out", path("out")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("--device cpu"));
  // Not the CUDA runtime's "driver version is insufficient", which it also says with no driver:
  // either no driver is installed, or it is too old, or no GPU is visible.
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("insufficient")));
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(CliTest, InfoReportsBackendAndTable) {
  const CliResult r = cli({"info", "--device", "cpu"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("backend       cpu"));
  EXPECT_THAT(r.out, HasSubstr("launch table  built-in defaults"));
  const CliResult scene = cli({"info", "--device", "cpu", "--scene", "pile", "--worlds", "4"});
  EXPECT_EQ(scene.code, kExitOk) << scene.err;
  EXPECT_THAT(scene.out, HasSubstr("launch sizes  none for scene cable_pile as 4 worlds: the CPU "
                                   "backend runs each kernel as a loop"));
}

TEST_F(CliTest, InfoOnCudaListsEveryKernelsLaunchSize) {
  WEFT_REQUIRE_CUDA(gpu);
  const CliResult r = cli({"info", "--device", "cuda", "--scene", "cloth_hanging"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (KernelId id : allKernels()) EXPECT_THAT(r.out, HasSubstr(std::string(kernelName(id))));
}

TEST_F(CliTest, TuneLaunchRejectsUnknownNamesSuggestingTheValidOnes) {
  CliResult r = cli({"tune-launch", "--scenes", "poker_cardz"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("unknown scene 'poker_cardz'"));
  EXPECT_THAT(r.err, HasSubstr("cloth_hanging"));
  r = cli({"tune-launch", "--scenes", "cloth_hanging", "--kernels", "forward_stepp"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("unknown kernel 'forward_stepp'"));
  EXPECT_THAT(r.err, HasSubstr("did you mean forward_step?"));
  r = cli({"tune-launch", "--scenes", "cloth_hanging", "--block-dims", "48"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("not a power of two"));
}

TEST_F(CliTest, InfoWithWorldsNeedsAScene) {
  const CliResult r = cli({"info", "--device", "cpu", "--worlds", "16"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("--worlds needs --scene"));
}

TEST_F(CliTest, TuneLaunchWorldsRefusesWhatItCannotDo) {
  CliResult r = cli({"tune-launch", "--scenes", "cable_twist", "--worlds", "16", "--fresh"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("--fresh is for one-world tuning"));
  r = cli({"tune-launch", "--scenes", "cable_twist", "--worlds", "16", "--report", path("r")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("--report is for one-world tuning"));
}

// Batches on the CPU backend: every count is built and timed, the JSON holds the series the
// documentation promises and the page its table and chart. No timing is asserted.
TEST_F(CliTest, BenchTimesBatchesOfWorlds) {
  const CliResult r =
      cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--repetitions", "1",
           "--worlds", "1,3", "--json", path("bench.json"), "--markdown", path("BENCHMARKS.md")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 worlds"));
  const auto j = nlohmann::json::parse(readFile(path("bench.json")));
  const auto& worlds = j["scenes"][0]["worlds"];
  ASSERT_EQ(worlds.size(), 2u);
  EXPECT_EQ(worlds[0]["count"], 1);
  EXPECT_EQ(worlds[1]["count"], 3);
  EXPECT_EQ(worlds[1]["elements"], 180);
  EXPECT_EQ(worlds[1]["size"], "180 bodies");
  EXPECT_GT(worlds[1]["world_substeps_per_s"].get<double>(), 0.0);
  EXPECT_GT(worlds[1]["us_per_substep"].get<double>(), 0.0);
  const std::string page = readFile(path("BENCHMARKS.md"));
  EXPECT_THAT(page, HasSubstr("## Many worlds per GPU"));
  EXPECT_THAT(page, HasSubstr("10 frames timed, each with the host clock (CPU backend)"));
  EXPECT_THAT(page, HasSubstr("every frame is timed with the host clock (CPU backend)"));
  EXPECT_THAT(page, HasSubstr("benchmarks_worlds.svg"));
  EXPECT_THAT(readFile(path("benchmarks_worlds.svg")), HasSubstr("<polyline"));
  // No reference figures on the CPU backend: the page says so instead of naming a comparison.
  EXPECT_THAT(page,
              HasSubstr("Reference: none on this GPU (measured on an H100 and an H200 only)"));
  EXPECT_THAT(page, Not(HasSubstr("Newton 1.8.0 replicated")));
  // Batches alone: no empty single-world tables, a sentence saying why they are absent.
  ASSERT_EQ(cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "1",
                 "--worlds-only", "--markdown", path("ONLY.md")})
                .code,
            kExitOk);
  const std::string only = readFile(path("ONLY.md"));
  EXPECT_THAT(only, HasSubstr("Single-world figures: none in these results"));
  EXPECT_THAT(only, Not(HasSubstr("## User-visible cost")));
  EXPECT_THAT(only, HasSubstr("| cable_y_junction | 1 |"));
  EXPECT_EQ(
      cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "4,2"}).code,
      kExitError);
}

// The reference's figures are looked up by the GPU's model: the H100's and the H200's measured
// tables, none for other GPUs or the CPU backend; each table names where it was measured, and the
// H200's targets follow the performance issues' rule (a third of the reference's window).
TEST(ReferenceFigures, AreTheMeasuredOnesOfTheGpuModelOrNone) {
  const ReferenceGpu* h100 = referenceGpu("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_STREQ(h100->model, "H100");
  EXPECT_EQ(h100->windows.at("cable_twist").windowUs, 399.0);
  EXPECT_EQ(h100->worlds.at("cable_y_junction").at(4096), 1552145.0);
  EXPECT_THAT(h100->windowProvenance, HasSubstr("H100 80GB HBM3, measured 2026-11-23"));

  const ReferenceGpu* h200 = referenceGpu("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_STREQ(h200->model, "H200");
  EXPECT_THAT(h200->windowProvenance, HasSubstr("NVIDIA H200, measured 2026-12-01"));
  EXPECT_THAT(h200->worldsProvenance, HasSubstr("on an H200 (2026-12-01"));
  EXPECT_EQ(h200->worlds.at("cable_twist").at(1024), 224370.0);
  EXPECT_EQ(h200->worlds.at("cable_pile").at(64), 7494.0);
  EXPECT_EQ(h200->windows.at("cloth_rollers").windowUs, 7504.5);
  EXPECT_EQ(h200->windows.count("cloth_twist"), 0u);  // its example needs OpenUSD: not run there
  for (const auto& [scene, w] : h200->windows) {
    EXPECT_GT(w.windowUs, 0.0) << scene;
    EXPECT_DOUBLE_EQ(w.targetUs, w.windowUs / 3.0) << scene;
  }
  for (const auto& [scene, series] : h200->worlds) EXPECT_EQ(series.count(1), 1u) << scene;

  EXPECT_EQ(referenceGpu("NVIDIA A100-SXM4-80GB"), nullptr);
  EXPECT_EQ(referenceGpu(""), nullptr);
  EXPECT_EQ(referenceGpuModels(), "an H100 and an H200");
}

// The page from two runs: single-world runs first, then the batches alone laid over them. The
// merged JSON and page hold both; a file of another build is refused, and --worlds-only needs
// --worlds.
TEST_F(CliTest, BenchPageFromSingleRunsAndBatchesMeasuredApart) {
  CliResult r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--repetitions",
                     "1", "--json", path("single.json")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  {  // As a GPU run would have it: a table of the source tree and a per-kernel breakdown.
    auto j = nlohmann::json::parse(readFile(path("single.json")));
    auto& run = j["scenes"][0]["runs"][0];
    run["table"] = "/home/someone/weft/kernels/runtime/tables/some_gpu.json";
    run["breakdown"] = nlohmann::json::array({{{"kernel", "solve_rigid_body_tile"},
                                               {"us_per_substep_isolated", 45.2},
                                               {"launches_per_substep", 6}}});
    writeFile(path("single.json"), j.dump());
  }
  r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "1,2",
           "--worlds-only", "--merge", path("single.json"), "--json", path("all.json"),
           "--markdown", path("BENCHMARKS.md")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err,
              ::testing::Not(HasSubstr("measuring cable_y_junction (")));  // no single-world run
  const auto single = nlohmann::json::parse(readFile(path("single.json")));
  const auto all = nlohmann::json::parse(readFile(path("all.json")));
  ASSERT_EQ(all["scenes"].size(), 1u);
  const auto& s = all["scenes"][0];
  EXPECT_EQ(s["runs"], single["scenes"][0]["runs"]);  // the earlier run's, untouched
  EXPECT_EQ(s["convergence"], single["scenes"][0]["convergence"]);
  ASSERT_EQ(s["worlds"].size(), 2u);
  EXPECT_EQ(s["worlds"][1]["count"], 2);
  EXPECT_EQ(all["repetitions"], single["repetitions"]);
  const std::string page = readFile(path("BENCHMARKS.md"));
  EXPECT_THAT(page, HasSubstr("## One substep at the densest frame"));
  EXPECT_THAT(page, HasSubstr("| cable_y_junction | 60 bodies | 20 × 5 |"));
  EXPECT_THAT(page, HasSubstr("## Many worlds per GPU"));
  EXPECT_THAT(page, HasSubstr("| cable_y_junction | 2 | 120 bodies |"));
  // The table named from the source tree's root, not by this machine's path.
  EXPECT_THAT(page, HasSubstr("**cable_y_junction** (kernels/runtime/tables/some_gpu.json): "
                              "solve_rigid_body_tile 45 µs ×6"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("/home/someone")));

  auto other = single;
  other["commit"] = "0123456789ab";
  writeFile(path("other.json"), other.dump());
  r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "1",
           "--worlds-only", "--merge", path("other.json"), "--json", path("m.json")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("at commit 0123456789ab"));
  writeFile(path("bad.json"), "{\"scenes\": 3}");
  r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--merge", path("bad.json"),
           "--json", path("m.json")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("is not the --json of a weft bench run"));
  r = cli(
      {"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--merge", path("single.json")});
  EXPECT_EQ(r.code, kExitError);  // merged, then written nowhere
  EXPECT_THAT(r.err, HasSubstr("give --json or --markdown (or both) to write them"));
  EXPECT_FALSE(fs::exists(path("m.json")));
  r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds-only"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("--worlds-only needs --worlds"));
}

// The page shows the reference's figures where the results carry them (as a run on an H100 or an
// H200 writes them): each section names their provenance, the window row the reference's figure,
// target and ratio, the batch row the reference's throughput and Weft's multiple of it.
TEST_F(CliTest, BenchPageShowsTheReferenceAndWhereItWasMeasured) {
  CliResult r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--repetitions",
                     "1", "--json", path("single.json")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  {  // As bench_command.cpp writes them from apps/reference_figures.cpp on a GPU that has them.
    auto j = nlohmann::json::parse(readFile(path("single.json")));
    auto& s = j["scenes"][0];
    const double mine = s["runs"][0]["window"]["us_per_substep_median"].get<double>();
    s["reference"] = {{"window_us", 4.0 * mine},
                      {"step_us", 0.0},
                      {"target_us", 2.0 * mine},
                      {"note", ""},
                      {"provenance", "Reference Solver 9 on GPU Z, measured 2099-01-01"}};
    s["worlds_reference"] = nlohmann::json::array({{{"count", 1}, {"world_substeps_per_s", 1.0}}});
    s["worlds_reference_provenance"] = "Reference Solver 9 replicated on GPU Z";
    writeFile(path("single.json"), j.dump());
  }
  r = cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "1",
           "--worlds-only", "--merge", path("single.json"), "--markdown", path("BENCHMARKS.md")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string page = readFile(path("BENCHMARKS.md"));
  EXPECT_THAT(page, HasSubstr("Reference: Reference Solver 9 on GPU Z, measured 2099-01-01. Its "
                              "window is its example's step() per frame"));
  EXPECT_THAT(page, HasSubstr("| – | ≤ "));  // step() not timed, then the target
  EXPECT_THAT(page, HasSubstr("| 4.00× faster | met |"));
  EXPECT_THAT(page, HasSubstr("Reference: Reference Solver 9 replicated on GPU Z."));
  EXPECT_THAT(page, Not(HasSubstr("Reference: none on this GPU")));
  EXPECT_THAT(page, HasSubstr("| 1.0× | one world's | 1 | "));  // its 1, then Weft's multiple
}

TEST_F(CliTest, TuneLaunchWithoutGpuSaysWhy) {
  if (visibleCudaDevices() > 0) GTEST_SKIP() << "a GPU is visible";
  const CliResult r = cli({"tune-launch", "--scenes", "cloth_hanging", "--out", path("t.json")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("CUDA GPU"));
  EXPECT_FALSE(fs::exists(path("t.json")));
}

// The benchmark on the CPU backend with one repetition: it runs, it reports, and its JSON and
// page hold what the documentation promises. No timing is asserted.
TEST_F(CliTest, BenchRunsOnTheCpuAndWritesValidJson) {
  const CliResult r = cli({"bench", "--scenes", "cloth_hanging", "--device", "cpu", "--repetitions",
                           "1", "--json", path("bench.json"), "--markdown", path("BENCHMARKS.md")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("launch tables do not apply (the tuned table is not used): "
                               "measuring the built-in defaults"));
  EXPECT_THAT(r.out, HasSubstr("cloth_hanging"));
  EXPECT_THAT(r.out, HasSubstr("us/substep"));
  const auto j = nlohmann::json::parse(readFile(path("bench.json")));
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_TRUE(j.contains("commit"));
  EXPECT_TRUE(j.contains("date"));
  ASSERT_EQ(j["scenes"].size(), 1u);
  const auto& s = j["scenes"][0];
  EXPECT_EQ(s["scene"], "cloth_hanging");
  EXPECT_EQ(s["size"], "1089 particles");
  EXPECT_EQ(s["elements"], 1089);
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(s["runs"][0]["table"], "built-in defaults");
  EXPECT_GT(s["runs"][0]["us_per_substep"]["median"].get<double>(), 0.0);
  EXPECT_GT(s["runs"][0]["us_per_frame"]["median"].get<double>(), 0.0);
  const auto& window = s["runs"][0]["window"];
  EXPECT_EQ(window["first_frame"], 2);
  EXPECT_EQ(window["end_frame"], 5);
  EXPECT_GT(window["us_per_substep_median"].get<double>(), 0.0);
  EXPECT_LE(window["us_per_substep_min"].get<double>(),
            window["us_per_substep_median"].get<double>());
  const std::string page = readFile(path("BENCHMARKS.md"));
  EXPECT_THAT(page, HasSubstr("| cloth_hanging | 1089 particles | 10 × 10 |"));
  EXPECT_THAT(page, HasSubstr("| cloth_hanging | 1089 particles | 2–5 |"));
  EXPECT_FALSE(s.contains("convergence"));  // a cloth scene
}

// A cable scene's benchmark also records how the solve converges over its window: the largest body
// step of each iteration, median over the window's substeps, in the JSON and on the page.
TEST_F(CliTest, BenchRecordsACableScenesConvergence) {
  const CliResult r =
      cli({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--repetitions", "1",
           "--json", path("bench.json"), "--markdown", path("BENCHMARKS.md")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(readFile(path("bench.json")));
  const auto& c = j["scenes"][0]["convergence"];
  EXPECT_EQ(c["first_frame"], 20);
  EXPECT_EQ(c["end_frame"], 80);
  EXPECT_EQ(c["substeps"], 60 * 20);
  const auto steps = c["median_translation_step_m"].get<std::vector<double>>();
  ASSERT_EQ(steps.size(), 5u);  // the scene's iterations
  EXPECT_GT(steps.front(), 0.0);
  EXPECT_LT(steps.back(), steps.front()) << "the last sweep should move the bodies less";
  EXPECT_EQ(c["median_rotation_step_rad"].size(), 5u);
  EXPECT_THAT(readFile(path("BENCHMARKS.md")),
              HasSubstr("## Convergence of the cable solves over the window"));
  EXPECT_THAT(readFile(path("BENCHMARKS.md")), HasSubstr("| cable_y_junction | 20–80 | 1200 | "));
}

// A relative summary path whose folders do not exist yet is fine: they are made.
TEST_F(CliTest, RelativeSummaryPathInNewFoldersIsWritten) {
  fs::create_directories(dir_);
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  const CliResult r = cli({"run", "cloth_fold", "--device", "cpu", "--frames", "1", "--format",
                           "none", "--summary", "new/sub/summary.json"});
  fs::current_path(before);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "new/sub/summary.json"));
}

TEST_F(CliTest, VersionPrintsTheCommitAndExitsZero) {
  const CliResult r = cli({"--version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("weft "));
  EXPECT_GT(r.out.size(), std::string("weft \n").size());
}

TEST_F(CliTest, UnknownCommandIsNamedWithTheValidOnes) {
  const CliResult r = cli({"frobnicate", "--frames", "2"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frobnicate'"));
  for (const char* name : {"run", "scenes", "info", "tune-launch", "bench"})
    EXPECT_THAT(r.err, HasSubstr(name));
}

TEST_F(CliTest, HelpExitsZero) {
  EXPECT_EQ(cli({"--help"}).code, kExitOk);
  EXPECT_EQ(cli({"run", "--help"}).code, kExitOk);
}

}  // namespace
}  // namespace weft
