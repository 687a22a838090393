// Text for messages and help (core/text.hpp): the edit distance that names the nearest subcommand, words wrapped.
#include <catch2/catch.hpp>

#include "core/text.hpp"

TEST_CASE("text: edit distance and wrapped words", "[text]") {
    CHECK(swgpu::edit_distance("align", "align") == 0);
    CHECK(swgpu::edit_distance("aligm", "align") == 1);
    CHECK(swgpu::edit_distance("", "sor") == 3);
    CHECK(swgpu::edit_distance("kitten", "sitting") == 3);
    CHECK(swgpu::wrapped("a bb ccc dddd", "  ", 6) == "a bb\n  ccc\n  dddd");
    CHECK(swgpu::wrapped("word", "", 2) == "word");
    CHECK(swgpu::wrapped("", "  ", 10).empty());
}
