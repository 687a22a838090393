// The tuning registry (core/tuning.hpp): the table's rows per device and its "*" fallback, SWGPU_TUNE's form and its
// errors, scoped overrides, and that the compiled-in data/tuning.tsv and docs/conventions.md cover every key.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/tuning.hpp"
#include "tests/cli_support.hpp"

using namespace swgpu;

namespace {

// The message of the error `f` throws, with its exit code checked.
template <class F>
std::string error_of(F f, exit_code code) {
    try {
        f();
    } catch (const error& e) {
        CHECK(e.code() == code);
        return e.what();
    }
    FAIL("no error thrown");
    return {};
}

}  // namespace

TEST_CASE("tuning: a table's row for the device, else its \"*\" row", "[tuning]") {
    const auto t = tuning::table::parse("# a comment\n"
                                        "device\tkey\tvalue\tcomment\n"
                                        "\n"
                                        "sm_90\tlong.batch\t100\tfitted here\n"
                                        "*\tlong.batch\t192\tthe default\n"
                                        "*\tlong.split\tcolumns\n"
                                        "sm_80\tlong.split\trows\t\n",
                                        "test.tsv");
    REQUIRE(t.find("long.batch", "sm_90"));
    CHECK(*t.find("long.batch", "sm_90") == "100");
    CHECK(*t.find("long.batch", "sm_80") == "192");
    CHECK(*t.find("long.batch", "*") == "192");
    CHECK(*t.find("long.batch", "") == "192");
    CHECK(*t.find("long.split", "sm_90") == "columns");
    CHECK(*t.find("long.split", "sm_80") == "rows");
    CHECK(t.find("sor.lex", "sm_90") == nullptr);
}

TEST_CASE("tuning: malformed tables name the file and the line", "[tuning]") {
    const auto message = [](const char* tsv) {
        return error_of([&] { (void)tuning::table::parse(tsv, "t.tsv"); }, exit_code::runtime_failure);
    };
    CHECK(message("*\tlong.batch\n").find("t.tsv:1: expected device<TAB>key<TAB>value") != std::string::npos);
    CHECK(message("# c\n*\tno.such\t1\n").find("t.tsv:2: unknown key \"no.such\"") != std::string::npos);
    CHECK(message("*\tlong.batch\tmany\n").find("t.tsv:1: long.batch takes an integer") != std::string::npos);
    CHECK(message("*\tlong.split\tdiagonal\n").find("long.split takes one of rows|columns, not \"diagonal\"") !=
          std::string::npos);
    CHECK(message("*\tlong.batch\t1\n*\tlong.batch\t2\n").find("t.tsv:2: a second row") != std::string::npos);
}

TEST_CASE("tuning: the compiled-in table has a \"*\" row of the right type for every key", "[tuning]") {
    const auto& t = tuning::builtin_table();
    for (const auto& s : tuning::settings()) {
        INFO(std::string(s.key));
        CHECK(t.find(s.key, "*") != nullptr);
    }
    // Today's values where nothing overrides them (those of the code before the table).
    CHECK(tuning::integer("long.batch", "sm_90") == 192);
    CHECK(tuning::integer("long.batch", "sm_75") == 192);
    CHECK(tuning::text("long.split", "sm_90") == "rows");
    CHECK(tuning::real("long.split_cells") == 1e9);
    CHECK_FALSE(tuning::flag("long.split_forced"));
    CHECK(tuning::integer("long.entry") == -1);
    CHECK(tuning::flag("long.peer"));
    CHECK(tuning::integer("search.boundary_mib") == 2048);
    CHECK(tuning::flag("search.prepare"));
    CHECK(tuning::integer("search.logical_devices") == 1);
    CHECK(tuning::text("sor.lex") == "strips");
    CHECK(tuning::integer("sor.batch") == 32);
    CHECK(tuning::text("sweep.schedule") == "auto");
    CHECK(tuning::integer("sweep.tile") == 0);
    CHECK(tuning::integer("sweep.block") == 256);
    CHECK(tuning::text("levels.analysis") == "auto");
    CHECK(tuning::integer("levels.frontier_cap") == 2048);
    CHECK(tuning::flag("levels.chained"));
    CHECK(tuning::integer("levels.frontier_blocks") == 1);
    CHECK(tuning::integer("levels.grid_blocks", "sm_90") == 1);
}

TEST_CASE("tuning: SWGPU_TUNE's key=value list", "[tuning]") {
    CHECK(tuning::parse_overrides("").empty());
    CHECK(tuning::parse_overrides("  ").empty());
    const auto v = tuning::parse_overrides("long.split=columns, long.split_cells=0 ,search.profile=1,sweep.tile=16");
    REQUIRE(v.size() == 4);
    CHECK(v.at("long.split") == "columns");
    CHECK(v.at("long.split_cells") == "0");
    CHECK(v.at("search.profile") == "1");
    CHECK(v.at("sweep.tile") == "16");
    CHECK(tuning::parse_overrides("sor.batch=1,sor.batch=4").at("sor.batch") == "4");  // the last one counts
}

TEST_CASE("tuning: a malformed SWGPU_TUNE is one line naming the entry and the known keys", "[tuning]") {
    const auto message = [](const char* spec) {
        return error_of([&] { (void)tuning::parse_overrides(spec); }, exit_code::bad_command_line);
    };
    const std::string unknown = message("long.batch=4,long.bach=4");
    CHECK(unknown.find("SWGPU_TUNE: unknown key \"long.bach\"") == 0);
    CHECK(unknown.find("expected key=value[,key=value...] with keys search.profile, ") != std::string::npos);
    for (const auto& s : tuning::settings()) CHECK(unknown.find(std::string(s.key)) != std::string::npos);
    CHECK(unknown.find('\n') == std::string::npos);
    CHECK(message("long.batch").find("SWGPU_TUNE: \"long.batch\" is not key=value") == 0);
    CHECK(message("long.batch=4,").find("\"\" is not key=value") != std::string::npos);
    CHECK(message("long.batch=4x").find("long.batch takes an integer, not \"4x\"") != std::string::npos);
    CHECK(message("search.profile=maybe").find("search.profile takes 0 or 1") != std::string::npos);
    CHECK(message("sweep.tile=12").find("sweep.tile takes one of 0|8|16, not \"12\"") != std::string::npos);
    CHECK(message("sor.lex=").find("sor.lex takes one of strips|tiled|rowsync|diagonal, not \"\"") !=
          std::string::npos);
}

TEST_CASE("tuning: a scoped override sets keys and restores them, nested", "[tuning]") {
    CHECK(tuning::text("sor.lex") == "strips");
    {
        const tuning::scoped_override a("sor.lex=diagonal,sor.batch=3");
        CHECK(tuning::text("sor.lex") == "diagonal");
        CHECK(tuning::integer("sor.batch", "sm_90") == 3);
        {
            const tuning::scoped_override b("sor.lex=tiled,levels.chained=0");
            CHECK(tuning::text("sor.lex") == "tiled");
            CHECK_FALSE(tuning::flag("levels.chained"));
            CHECK(tuning::integer("sor.batch") == 3);
        }
        CHECK(tuning::text("sor.lex") == "diagonal");
        CHECK(tuning::flag("levels.chained"));
    }
    CHECK(tuning::text("sor.lex") == "strips");
    CHECK(tuning::integer("sor.batch") == 32);
    CHECK(error_of([] { tuning::scoped_override bad("sor.lex=sideways"); }, exit_code::bad_command_line)
              .find("sor.lex takes one of strips|tiled|rowsync|diagonal, not \"sideways\"") != std::string::npos);
}

TEST_CASE("tuning: a lookup of an unknown key or of the wrong type is an internal error", "[tuning]") {
    CHECK(error_of([] { (void)tuning::integer("long.bach"); }, exit_code::runtime_failure).find("internal error") == 0);
    CHECK(error_of([] { (void)tuning::text("long.batch"); }, exit_code::runtime_failure).find("internal error") == 0);
}

TEST_CASE("tuning: docs/conventions.md lists every key", "[tuning]") {
    std::ifstream in(std::string(SWGPU_SOURCE_DIR) + "/docs/conventions.md");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& s : tuning::settings()) {
        INFO(std::string(s.key));
        CHECK(text.str().find("| `" + std::string(s.key) + "` |") != std::string::npos);
    }
}

TEST_CASE("tuning: swgpu refuses a malformed SWGPU_TUNE before any work, and takes a valid one", "[tuning][cli]") {
    const testing::temp_dir io("swgpu-tune");
    const std::string data = std::string(SWGPU_SOURCE_DIR) + "/data/";
    const auto run = [&](const std::string& tune) {
        const std::string cmd = "SWGPU_TUNE='" + tune + "' '" + std::string(SWGPU_BINARY) + "' align --backend cpu " +
                                data + "demo_queries.fa " + data + "demo_db.fa -k 3 -o '" + (io / "hits.tsv") +
                                "' </dev/null 2>'" + (io / "err") + "'";
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    CHECK(run("search.prepare=0,long.bach=4") == 2);
    const std::string err = testing::slurp(io / "err");
    CHECK(testing::one_error_line(err));
    CHECK(err.rfind("swgpu: error: SWGPU_TUNE: unknown key \"long.bach\"", 0) == 0);
    CHECK(io.count() == 1);  // the error message only: no output file
    CHECK(run("search.prepare=0, long.batch=16") == 0);
    CHECK(testing::slurp(io / "hits.tsv").size() > 100);
}
