// Opens a TORCH_TRACE log as the GUI and CLI do (GraphFile::open: the one-pass index), then loads one graph
// from it, and prints what that took as JSON: index seconds, peak RSS, graphs found, seconds to load the
// graph. Usage: log_open LOG [INDEX]   (INDEX: the graph to load; default: the one with the longest payload)
//        log_open --list LOG   (when the Graphs dock's list, filled while the log is indexed, shows the first
//        graph and half of them)
// bench/log_index_vs_tlparse.py runs it beside tlparse on the same file.
#include "io/GraphFile.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Resident now (the index held), beside the peak (what building it took on the way).
double currentRssMiB() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

long peakRssKiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

} // namespace

// log_open --list LOG: the open as the GUI's Graphs dock sees it (OpenOptions::graphsFound): when the first
// graph and half of them were listed, against the whole index.
int listWhileIndexing(const char* path) {
    const auto start = std::chrono::steady_clock::now();
    jointscope::OpenOptions options;
    size_t listed = 0, batches = 0, expected = 0;
    double first = -1, half = -1;
    std::vector<double> at; // seconds at which each batch came, with the count listed by then
    std::vector<size_t> counts;
    options.graphsFound = [&](jointscope::GraphList batch) {
        listed += batch.size();
        ++batches;
        at.push_back(secondsSince(start));
        counts.push_back(listed);
        if (first < 0)
            first = at.back();
    };
    jointscope::Expected<jointscope::GraphFile> file = jointscope::GraphFile::open(path, options);
    if (!file) {
        std::fprintf(stderr, "%s\n", file.error().format().c_str());
        return 1;
    }
    const double indexSeconds = secondsSince(start);
    expected = file->graphs().size();
    for (size_t i = 0; i < at.size(); ++i)
        if (half < 0 && 2 * counts[i] >= expected)
            half = at[i];
    std::printf("{\"index_seconds\": %.3f, \"graphs\": %zu, \"listed\": %zu, \"batches\": %zu, "
                "\"first_listed_seconds\": %.3f, \"half_listed_seconds\": %.3f, \"peak_rss_mb\": %.1f}\n",
                indexSeconds, expected, listed, batches, first, half, peakRssKiB() / 1024.0);
    return listed == expected ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--list")
        return listWhileIndexing(argv[2]);
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s LOG [INDEX] | --list LOG\n", argv[0]);
        return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    jointscope::Expected<jointscope::GraphFile> file = jointscope::GraphFile::open(argv[1]);
    if (!file) {
        std::fprintf(stderr, "%s\n", file.error().format().c_str());
        return 1;
    }
    const double indexSeconds = secondsSince(start);
    const long indexRss = peakRssKiB();
    const double heldRss = currentRssMiB();
    const double listMiB = double(file->graphs().heldBytes()) / (1024.0 * 1024.0);
    if (file->graphs().empty()) {
        std::fprintf(stderr, "%s: no graphs\n", argv[1]);
        return 1;
    }
    size_t chosen = 0;
    if (argc == 3) {
        chosen = std::strtoul(argv[2], nullptr, 10);
    } else {
        for (const jointscope::GraphEntry& entry : file->graphs())
            if (entry.payloadBytes > file->graphs()[chosen].payloadBytes)
                chosen = entry.index;
    }
    const auto loadStart = std::chrono::steady_clock::now();
    jointscope::Expected<jointscope::Graph> graph = file->load(chosen);
    const double loadSeconds = secondsSince(loadStart);
    // What the window reads next when a joint graph is picked: its compile's configuration, from that
    // compile's own records. The last joint graph of the log: the farthest a user can pick.
    size_t joint = chosen;
    for (const jointscope::GraphEntry& entry : file->graphs())
        if (entry.kind == "aot_joint_graph")
            joint = entry.index;
    const auto configStart = std::chrono::steady_clock::now();
    const std::optional<jointscope::CompileConfig> config = file->compileConfigFor(file->graphs()[joint]);
    const double configSeconds = secondsSince(configStart);
    if (!graph) {
        std::fprintf(stderr, "%s\n", graph.error().format().c_str());
        return 1;
    }
    std::printf("{\"index_seconds\": %.3f, \"index_peak_rss_mb\": %.1f, \"index_held_rss_mb\": %.1f, "
                "\"list_held_mb\": %.1f, \"graphs\": %zu, \"problems\": %zu, "
                "\"loaded\": \"%s\", \"loaded_nodes\": %zu, \"load_seconds\": %.4f, \"config_graph\": "
                "\"%s\", \"config_seconds\": %.4f, \"config_found\": %s, \"peak_rss_mb\": %.1f}\n",
                indexSeconds, indexRss / 1024.0, heldRss, listMiB, file->graphs().size(),
                file->problems().size(), file->graphs()[chosen].title().c_str(), graph->size(), loadSeconds,
                file->graphs()[joint].title().c_str(), configSeconds, config ? "true" : "false",
                peakRssKiB() / 1024.0);
    return 0;
}
