// jointscope-cli profile: every op of a graph timed on real kernels, cached by signature in the profile DB.
#include "Command.h"

#include "cost/ProfileDb.h"
#include "runtime/Runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>

namespace jointscope::cli {
#ifdef JOINTSCOPE_CLI_RUNTIME
namespace {

using Json = nlohmann::ordered_json;

// Set by SIGTERM: the run stops before its next node and still prints what it measured (the GUI's Cancel
// keeps those). A signal handler reaches no object, only a variable of static storage.
volatile std::sig_atomic_t stopRequested = 0;

extern "C" void requestStop(int) {
    stopRequested = 1;
}

int readProfileOptions(const Command& command, const ParsedArgs& args, runtime::ProfileOptions& options) {
    if (int code = readRuntimeOptions(command, args, options.run); code != kExitOk)
        return code;
    if (int code = readIntOption(command, args, "--reps", 0, 100000, options.reps); code != kExitOk)
        return code;
    if (int code = readIntOption(command, args, "--warmup", 0, 100000, options.warmup); code != kExitOk)
        return code;
    if (options.reps < 1)
        return usageError(command, "--reps must be at least 1");
    options.flushL2 = args.has("--flush-l2");
    options.remeasure = args.has("--remeasure");
    if (options.remeasure && args.has("--no-db"))
        return usageError(command,
                          "--remeasure replaces the profile DB's rows: it needs the DB (drop --no-db)");
    return kExitOk;
}

// The profile DB the run stores into (none with --no-db), and the files the sandbox must leave writable.
int openProfileDb(const ParsedArgs& args, std::unique_ptr<cost::ProfileDb>& db,
                  std::vector<std::string>& writable) {
    if (args.has("--no-db"))
        return kExitOk;
    const std::string path = args.valueOr("--db", cost::defaultProfileDbPath());
    Expected<std::unique_ptr<cost::ProfileDb>> opened = cost::ProfileDb::open(path);
    if (!opened)
        return inputError(opened.error());
    db = opened.take();
    // The database and SQLite's files beside it, which its open connection holds already (WAL mode).
    // SQLite also deletes the -wal and -shm files when it closes the last connection; the sandbox keeps
    // it from doing that (the directory stays closed), and the next connection reuses them.
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(path + suffix, ec))
            writable.push_back(path + suffix);
    }
    return kExitOk;
}

void printProfileJson(const runtime::ProfileReport& r, const runtime::ProfileOptions& options) {
    Json nodes = Json::array();
    for (const runtime::NodeTiming& t : r.nodes) {
        Json n = {{"name", t.name}, {"op", t.op}};
        if (t.timeUs) {
            n["time_us"] = *t.timeUs;
            n["signature"] = t.signature;
            if (t.cached)
                n["cached"] = true;
        } else if (!t.skipped.empty()) {
            n["skipped"] = t.skipped;
        }
        if (!t.error.empty())
            n["error"] = t.error;
        nodes.push_back(std::move(n));
    }
    Json j = {{"device", r.device},        {"torch", r.torchVersion}, {"reps", options.reps},
              {"nodes", std::move(nodes)}, {"measured", r.measured},  {"cached", r.cached},
              {"sum_us", r.sumUs}};
    if (r.replayUs)
        j["replay_us"] = *r.replayUs;
    if (r.cancelled)
        j["cancelled"] = true;
    std::printf("%s\n", j.dump(1).c_str());
}

// The slowest ops first (20 of them), then the sums.
void printProfileText(const std::string& file, const runtime::ProfileReport& r) {
    std::vector<const runtime::NodeTiming*> timed;
    size_t skipped = 0, errors = 0;
    for (const runtime::NodeTiming& t : r.nodes) {
        if (t.timeUs)
            timed.push_back(&t);
        skipped += !t.skipped.empty();
        errors += !t.error.empty();
    }
    std::stable_sort(
        timed.begin(), timed.end(),
        [](const runtime::NodeTiming* a, const runtime::NodeTiming* b) { return *a->timeUs > *b->timeUs; });
    std::printf(
        "%s on %s (torch %s): %zu ops timed, %zu skipped, %zu failed; %zu signatures measured, %zu from "
        "the profile DB\n",
        file.c_str(), r.device.c_str(), r.torchVersion.c_str(), timed.size(), skipped, errors, r.measured,
        r.cached);
    std::printf("%12s  %-28s %s\n", "time (us)", "node", "op");
    for (size_t i = 0; i < timed.size() && i < 20; ++i)
        std::printf("%12.2f  %-28s %s%s\n", *timed[i]->timeUs, timed[i]->name.c_str(), timed[i]->op.c_str(),
                    timed[i]->cached ? "  (cached)" : "");
    if (timed.size() > 20)
        std::printf("%12s  ... %zu more\n", "", timed.size() - 20);
    std::printf("sum of per-op medians: %.1f us", r.sumUs);
    if (r.replayUs)
        std::printf("; whole-graph replay: %.1f us (sum / replay = %.3f)", *r.replayUs,
                    r.sumUs / *r.replayUs);
    std::printf("\n");
}

// Each op that failed, located on its node's line as errors are.
void warnFailedOps(const std::string& file, const Graph& graph, const runtime::ProfileReport& r) {
    for (const runtime::NodeTiming& t : r.nodes) {
        if (t.error.empty())
            continue;
        const std::optional<NodeId> id = graph.find(t.name);
        // Built member by member: GCC 12 at -O3 takes the aggregate's temporaries for uninitialized.
        Diagnostic d = makeError({file, id ? graph.node(*id).meta.sourceLine : 0, 0},
                                 "node '" + t.name + "' (" + t.op + "): " + t.error);
        d.severity = Severity::Warning;
        std::fprintf(stderr, "%s\n", d.format().c_str());
    }
}

int runProfile(const ParsedArgs& args) {
    const Command& command = profileCommand();
    runtime::ProfileOptions options;
    if (int code = readProfileOptions(command, args, options); code != kExitOk)
        return code;
    Graph graph;
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    if (int code = refuseUnsafeOps(args, {&graph}, options.run); code != kExitOk)
        return code;
    std::unique_ptr<cost::ProfileDb> db;
    std::vector<std::string> writable;
    if (int code = openProfileDb(args, db, writable); code != kExitOk)
        return code;
    options.db = db.get();
    if (int code = enterSandbox(args, writable, kExitBadInput, options.run); code != kExitOk)
        return code;
    std::signal(SIGTERM, requestStop);
    options.progress = [report = args.has("--progress")](size_t done, size_t total) {
        if (report)
            std::fprintf(stderr, "progress %zu/%zu\n", done, total);
        return stopRequested == 0;
    };

    Expected<runtime::ProfileReport> report = runtime::profileGraph(graph, options, args.has("--replay"));
    if (!report)
        return inputError(atInputFile(args, report.error()));
    const runtime::ProfileReport& r = *report;
    if (!r.storeErrors.empty()) {
        // A measurement that was not stored is lost: fail rather than report it as measured.
        std::fprintf(stderr,
                     "jointscope-cli: error: %zu of %zu measurements could not be stored in the profile "
                     "database: %s\n",
                     r.storeErrors.size(), r.measured, r.storeErrors.front().c_str());
        return kExitBadInput;
    }
    if (args.has("--json")) {
        printProfileJson(r, options);
        return kExitOk;
    }
    printProfileText(args.positional[0], r);
    warnFailedOps(args.positional[0], graph, r);
    return kExitOk;
}

} // namespace
#endif

const Command& profileCommand() {
    static const Command command{
        "profile",
        {"FILE"},
        "Time every op of a graph on real kernels (median of N runs), cached by signature in the profile DB "
        "(a row timed over fewer runs is measured again). SIGTERM stops before the next op and prints what "
        "was measured.",
        withRuntimeOptions(
            {graphOption(),
             metaOption(),
             {"--reps", "", "N", "timed runs per op signature (default 10)"},
             {"--warmup", "", "N", "untimed runs first (default 3)"},
             {"--db", "", "PATH",
              "profile DB (default: $JOINTSCOPE_PROFILE_DB, else ~/.cache/jointscope/profiles.sqlite)"},
             {"--no-db", "", "", "measure everything, store nothing"},
             {"--remeasure", "", "", "measure every op again and replace its profile DB row"},
             {"--flush-l2", "", "", "CUDA: flush the L2 cache before each timed run"},
             {"--replay", "", "", "also time the whole graph end to end"},
             {"--progress", "", "", "print 'progress DONE/TOTAL' lines on stderr"},
             jsonOption()}),
        1,
        1,
        JOINTSCOPE_RUNTIME_RUN(&runProfile),
    };
    return command;
}

} // namespace jointscope::cli
