// Loads one FX text file and prints parse time and memory: the peak-RSS growth during readFxText
// (getrusage ru_maxrss) and the resident growth while the Graph is alive (/proc/self/statm).
// Usage: measure_rss FILE.txt    (docs/benchmarks.md records the results)
#include "io/FxReader.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

long peakRssKiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss; // KiB on Linux
}

long currentRssKiB() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    long resident = 0;
    statm >> pages >> resident;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FILE.txt\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "%s: error: cannot open\n", argv[1]);
        return 1;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();

    const long peakBefore = peakRssKiB();
    const long currentBefore = currentRssKiB();
    const auto start = std::chrono::steady_clock::now();
    jointscope::FxReadOptions options;
    options.fileName = argv[1];
    jointscope::Expected<jointscope::Graph> graph = jointscope::readFxText(text, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long peakAfter = peakRssKiB();
    const long currentAfter = currentRssKiB();
    if (!graph) {
        std::fprintf(stderr, "%s\n", graph.error().format().c_str());
        return 1;
    }
    const double nodes = static_cast<double>(graph->size());
    std::printf("file %s\n", argv[1]);
    std::printf("text_MB %.1f\n", static_cast<double>(text.size()) / 1e6);
    std::printf("nodes %.0f\n", nodes);
    std::printf("parse_s %.3f\n", seconds);
    std::printf("peak_rss_before_MiB %.1f\n", peakBefore / 1024.0);
    std::printf("peak_rss_delta_MiB %.1f\n", (peakAfter - peakBefore) / 1024.0);
    std::printf("resident_delta_MiB %.1f   (Graph alive after parse)\n", (currentAfter - currentBefore) / 1024.0);
    std::printf("resident_bytes_per_node %.0f\n", (currentAfter - currentBefore) * 1024.0 / nodes);
    return 0;
}
