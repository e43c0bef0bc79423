// Writes jointscope JSON for each FX text given: json_seeds OUT_DIR FILE.txt... (seeds for fuzz_json_graph).
#include "io/FxReader.h"
#include "io/JsonFormat.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s OUT_DIR FILE.txt...\n", argv[0]);
        return 2;
    }
    const std::filesystem::path outDir = argv[1];
    int written = 0;
    for (int i = 2; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        jointscope::Expected<jointscope::Graph> graph = jointscope::readFxText(text.str(), {argv[i], 1, 0});
        if (!graph)
            continue;
        std::ofstream out(outDir / (std::filesystem::path(argv[i]).stem().string() + ".json"), std::ios::binary);
        out << jointscope::writeJsonGraph(*graph);
        ++written;
    }
    std::printf("json_seeds: %d of %d FX files written as JSON\n", written, argc - 2);
    return 0;
}
