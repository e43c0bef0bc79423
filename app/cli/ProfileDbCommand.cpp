// jointscope-cli profile-db: list, export and import the measured op times (docs/formats.md, "Profile DB").
#include "Command.h"

#include "cost/ProfileDb.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace jointscope::cli {
namespace {

std::string databasePath(const ParsedArgs& args) {
    std::optional<std::string> db = args.value("--db");
    return db ? *db : cost::defaultProfileDbPath();
}

bool databaseExists(const std::string& path) {
    std::error_code ec;
    return path == ":memory:" || std::filesystem::exists(path, ec);
}

Expected<std::unique_ptr<cost::ProfileDb>> openDatabase(const std::string& path) {
    return cost::ProfileDb::open(path);
}

void printNumber(std::string& line, double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%10.2f", value);
    line += buf;
}

int runList(const ParsedArgs& args, const std::string& path, const std::optional<std::string>& device) {
    const bool asJson = args.has("--json");
    // Listing must not create the database (nor its directory) as a side effect.
    std::unique_ptr<cost::ProfileDb> db;
    if (databaseExists(path)) {
        Expected<std::unique_ptr<cost::ProfileDb>> opened = openDatabase(path);
        if (!opened)
            return inputError(opened.error());
        db = opened.take();
    }
    if (asJson) {
        if (db) {
            std::printf("%s", db->exportJson(device).c_str());
        } else {
            Expected<std::unique_ptr<cost::ProfileDb>> empty = openDatabase(":memory:");
            std::printf("%s", empty ? (*empty)->exportJson().c_str() : "{}\n");
        }
        return kExitOk;
    }
    const std::vector<cost::ProfileRecord> rows =
        db ? db->records(device) : std::vector<cost::ProfileRecord>{};
    std::printf("%s: %zu record%s%s\n", path.c_str(), rows.size(), rows.size() == 1 ? "" : "s",
                db ? "" : " (no database yet)");
    if (rows.empty())
        return kExitOk;
    size_t deviceWidth = 6, torchWidth = 5;
    for (const cost::ProfileRecord& r : rows) {
        deviceWidth = std::max(deviceWidth, r.key.device.size());
        torchWidth = std::max(torchWidth, r.key.torchVersion.size());
    }
    std::printf("%-*s  %-*s  %10s  %10s  %10s  %5s  %s\n", int(deviceWidth), "device", int(torchWidth),
                "torch", "median_us", "min_us", "max_us", "reps", "signature");
    for (const cost::ProfileRecord& r : rows) {
        std::string line = r.key.device + std::string(deviceWidth - r.key.device.size(), ' ') + "  " +
                           r.key.torchVersion + std::string(torchWidth - r.key.torchVersion.size(), ' ') +
                           "  ";
        printNumber(line, r.stats.medianUs);
        line += "  ";
        printNumber(line, r.stats.minUs);
        line += "  ";
        printNumber(line, r.stats.maxUs);
        char reps[16];
        std::snprintf(reps, sizeof reps, "  %5d  ", r.stats.reps);
        line += reps;
        line += r.key.signature;
        std::printf("%s\n", line.c_str());
    }
    return kExitOk;
}

int runExport(const ParsedArgs& args, const std::string& path, const std::optional<std::string>& device) {
    const std::optional<std::string> out = args.value("--out");
    if (!out)
        return usageError(profileDbCommand(), "export needs --out FILE.json");
    if (!databaseExists(path))
        return inputError(
            makeError({path, 0, 0}, "no profile database here (nothing measured or imported yet)"));
    Expected<std::unique_ptr<cost::ProfileDb>> db = openDatabase(path);
    if (!db)
        return inputError(db.error());
    const size_t count = (*db)->records(device).size();
    if (!writeOutputFile(*out, (*db)->exportJson(device)))
        return kExitBadInput;
    std::printf("exported %zu record%s to %s\n", count, count == 1 ? "" : "s", out->c_str());
    return kExitOk;
}

int runImport(const ParsedArgs& args, const std::string& path) {
    const std::string& file = args.positional[1];
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return inputError(makeError({file, 0, 0}, "cannot read file"));
    std::ostringstream text;
    text << in.rdbuf();
    Expected<std::unique_ptr<cost::ProfileDb>> db = openDatabase(path);
    if (!db)
        return inputError(db.error());
    Expected<size_t> count = (*db)->importJson(text.str(), file);
    if (!count)
        return inputError(count.error());
    std::printf("imported %zu record%s into %s\n", *count, *count == 1 ? "" : "s", path.c_str());
    return kExitOk;
}

int runProfileDb(const ParsedArgs& args) {
    const Command& command = profileDbCommand();
    const std::string& action = args.positional[0];
    const std::string path = databasePath(args);
    const std::optional<std::string> device = args.value("--device");
    if (action == "import") {
        if (args.positional.size() != 2)
            return usageError(command, "import needs one FILE.json");
        return runImport(args, path);
    }
    if (args.positional.size() > 1)
        return usageError(command, "unexpected argument '" + args.positional[1] + "'");
    if (action == "list")
        return runList(args, path, device);
    if (action == "export")
        return runExport(args, path, device);
    return usageError(command, "unknown action '" + action + "' (list, export or import)");
}

} // namespace

const Command& profileDbCommand() {
    static const Command command{
        "profile-db",
        {"list", "export --out FILE.json", "import FILE.json"},
        "List, export or import measured op times (the profile database).",
        {{"--db", "", "PATH", "profile database (default: $JOINTSCOPE_PROFILE_DB or the user cache)"},
         {"--device", "", "NAME", "only this device's records (list, export)"},
         {"--out", "-o", "FILE", "JSON file to write (export)"},
         jsonOption()},
        1,
        2,
        &runProfileDb,
    };
    return command;
}

} // namespace jointscope::cli
