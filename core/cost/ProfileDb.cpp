#include "cost/ProfileDb.h"

#include "io/JsonSupport.h"

#include <sqlite3.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <thread>
#include <limits>

namespace jointscope::cost {
namespace {

using json_support::Json;

constexpr int kSchemaVersion = 1;
constexpr std::string_view kFormat = "jointscope-profile";
constexpr int kFormatVersion = 1;

// WITHOUT ROWID: the key is the primary index, rows are looked up by it and nothing else.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS op_profiles(
  device TEXT NOT NULL,
  torch TEXT NOT NULL,
  signature TEXT NOT NULL,
  median_us REAL,
  min_us REAL,
  max_us REAL,
  mean_us REAL,
  reps INTEGER NOT NULL,
  measured_at TEXT NOT NULL,
  PRIMARY KEY (device, torch, signature)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS device_peaks(
  device TEXT PRIMARY KEY NOT NULL,
  fp32_gflops REAL NOT NULL,
  fp64_gflops REAL NOT NULL,
  gb_per_s REAL NOT NULL,
  measured_at TEXT NOT NULL
) WITHOUT ROWID;
)sql";

constexpr const char* kColumns =
    "device, torch, signature, median_us, min_us, max_us, mean_us, reps, measured_at";

// SQLite stores NaN as NULL; read it back as NaN rather than 0.
double columnDouble(sqlite3_stmt* stmt, int column) {
    if (sqlite3_column_type(stmt, column) == SQLITE_NULL)
        return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt, column);
}

std::string columnText(sqlite3_stmt* stmt, int column) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
    return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, column))) : std::string();
}

void bindText(sqlite3_stmt* stmt, int index, std::string_view text) {
    sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// Reads the stats columns starting at `first` (median, min, max, mean, reps, measured_at).
OpStats readStats(sqlite3_stmt* stmt, int first) {
    OpStats s;
    s.medianUs = columnDouble(stmt, first);
    s.minUs = columnDouble(stmt, first + 1);
    s.maxUs = columnDouble(stmt, first + 2);
    s.meanUs = columnDouble(stmt, first + 3);
    s.reps = sqlite3_column_int(stmt, first + 4);
    s.measuredAt = columnText(stmt, first + 5);
    return s;
}

bool isFilePath(const std::string& path) {
    return !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
}

// Byte offset of the n-th '{' outside strings (n from json_support::detail::objectOrdinal), or 0.
size_t nthObjectOffset(std::string_view text, size_t ordinal) {
    const size_t offset = json_support::findObject(text, ordinal);
    return offset == std::string_view::npos ? 0 : offset;
}

// Offset of key `name` directly inside the (valid) object opened at `open`, or `open` when absent.
size_t keyOffset(std::string_view text, size_t open, std::string_view name) {
    int depth = 0;
    for (size_t i = open; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            const size_t start = i;
            std::string raw;
            for (++i; i < text.size() && text[i] != '"'; ++i) {
                if (text[i] == '\\')
                    raw += text[i++];
                raw += text[i];
            }
            if (depth == 1 && raw == name) {
                size_t j = i + 1;
                while (j < text.size() &&
                       (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r'))
                    ++j;
                if (j < text.size() && text[j] == ':')
                    return start;
            }
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        }
    }
    return open;
}

std::string typeName(const Json& j) {
    if (j.is_number_integer())
        return "integer";
    return j.type_name();
}

// Checks one record of an imported document; the error names records[index] and the field, at the field.
class RecordReader {
public:
    RecordReader(std::string_view text, const Json& root, const std::string& fileName)
        : text_(text), root_(root), fileName_(fileName) {}

    Expected<ProfileRecord> read(const Json& record, size_t index) {
        index_ = index;
        record_ = &record;
        if (!record.is_object())
            return error("", "must be an object, got " + typeName(record));
        static constexpr std::string_view kKnown[] = {"device",    "torch",  "signature",
                                                      "median_us", "min_us", "max_us",
                                                      "mean_us",   "reps",   "measured_at"};
        for (const auto& item : record.items())
            if (std::find(std::begin(kKnown), std::end(kKnown), item.key()) == std::end(kKnown))
                return error(item.key(),
                             "unknown field (expected one of device, torch, signature, median_us, "
                             "min_us, max_us, mean_us, reps, measured_at)");
        ProfileRecord r;
        std::optional<Diagnostic> problem;
        auto readText = [&](const char* field, std::string& into, bool required) {
            if (problem)
                return;
            auto it = record.find(field);
            if (it == record.end()) {
                if (required)
                    problem = error("", std::string("missing field '") + field + "'");
                return;
            }
            if (!it->is_string()) {
                problem = error(field, "must be a string, got " + typeName(*it));
                return;
            }
            into = it->get<std::string>();
            if (required && into.empty())
                problem = error(field, "must not be empty");
        };
        // NaN is exported as null (JSON has no NaN); only the spread statistics may be missing that way.
        auto readNumber = [&](const char* field, double& into, bool required) {
            if (problem)
                return;
            auto it = record.find(field);
            if (it == record.end()) {
                if (required)
                    problem = error("", std::string("missing field '") + field + "'");
                return;
            }
            if (it->is_null() && !required) {
                into = std::numeric_limits<double>::quiet_NaN();
                return;
            }
            if (!it->is_number()) {
                problem = error(field, "must be a number, got " + typeName(*it));
                return;
            }
            into = it->get<double>();
        };
        readText("device", r.key.device, true);
        readText("torch", r.key.torchVersion, true);
        readText("signature", r.key.signature, true);
        readNumber("median_us", r.stats.medianUs, true);
        readNumber("min_us", r.stats.minUs, false);
        readNumber("max_us", r.stats.maxUs, false);
        readNumber("mean_us", r.stats.meanUs, false);
        readText("measured_at", r.stats.measuredAt, false);
        if (problem)
            return *problem;
        if (auto it = record.find("reps"); it != record.end()) {
            if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
                it->get<int64_t>() > std::numeric_limits<int>::max())
                return error("reps", "must be a non-negative integer, got " +
                                         (it->is_number_integer() ? it->dump() : typeName(*it)));
            r.stats.reps = static_cast<int>(it->get<int64_t>());
        }
        return r;
    }

private:
    Diagnostic error(std::string_view field, const std::string& message) const {
        size_t ordinal = 0;
        size_t offset = 0;
        if (record_->is_object() && json_support::detail::objectOrdinal(root_, record_, ordinal)) {
            offset = nthObjectOffset(text_, ordinal);
            if (!field.empty())
                offset = keyOffset(text_, offset, field);
        } else {
            offset = recordsOffset();
        }
        std::string where = "records[" + std::to_string(index_) + "]";
        if (!field.empty())
            where += "." + std::string(field);
        return makeError(json_support::locationOf(text_, offset, fileName_), where + ": " + message);
    }

    // A record that is not an object has no '{' to point at: point at the "records" key instead.
    size_t recordsOffset() const { return keyOffset(text_, nthObjectOffset(text_, 0), "records"); }

    std::string_view text_;
    const Json& root_;
    const std::string& fileName_;
    const Json* record_ = nullptr;
    size_t index_ = 0;
};

} // namespace

ProfileDb::ProfileDb(sqlite3* db) : db_(db) {}

ProfileDb::~ProfileDb() {
    if (batchDepth_ > 0) {
        batchDepth_ = 1;
        commitBatch();
    }
    sqlite3_finalize(lookupStmt_);
    sqlite3_finalize(storeStmt_);
    sqlite3_close_v2(db_);
}

bool ProfileDb::exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK)
        return true;
    lastError_ = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return false;
}

bool ProfileDb::execRetrying(const char* sql) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    while (true) {
        const int code = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
        if (code == SQLITE_OK)
            return true;
        if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline) {
            lastError_ = sqlite3_errmsg(db_);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

Expected<std::unique_ptr<ProfileDb>> ProfileDb::open(const std::string& path) {
    auto fail = [&](const std::string& message) {
        return makeError(SourceLocation{path, 0, 0}, "cannot open profile database: " + message);
    };
    if (isFilePath(path)) {
        const std::filesystem::path parent = std::filesystem::path(path).parent_path();
        std::error_code ec;
        if (!parent.empty())
            std::filesystem::create_directories(parent, ec);
        if (ec)
            return fail("cannot create directory " + parent.string() + ": " + ec.message());
    }
    sqlite3* raw = nullptr;
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
    if (sqlite3_open_v2(path.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
        std::string message = raw ? sqlite3_errmsg(raw) : "out of memory";
        sqlite3_close_v2(raw);
        return fail(message);
    }
    std::unique_ptr<ProfileDb> db(new ProfileDb(raw));
    // Several profiler processes and readers may share one file. WAL lets readers go on while one writes;
    // every write is a short transaction (one record), so a writer waits for another's commit, never for a
    // whole profile run. NORMAL sync is durable enough for measurements that can be retaken.
    sqlite3_busy_timeout(raw, kBusyTimeoutMs);
    // Switching to WAL needs the file to itself and answers SQLITE_BUSY at once (no busy handler) while another
    // process opens it: retry within the same time limit. A file already in WAL mode stays as it is.
    if (!db->execRetrying("PRAGMA journal_mode=WAL") || !db->exec("PRAGMA synchronous=NORMAL"))
        return fail(db->lastError_);
    // A database that has its schema is only read here: opening it takes no write lock.
    auto schemaVersion = [&]() -> std::optional<int> {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(raw, "SELECT version FROM schema_version", -1, &stmt, nullptr) != SQLITE_OK)
            return std::nullopt;
        std::optional<int> version;
        if (sqlite3_step(stmt) == SQLITE_ROW)
            version = sqlite3_column_int(stmt, 0);
        sqlite3_finalize(stmt);
        return version;
    };
    std::optional<int> existing = schemaVersion();
    if (!existing) {
        if (!db->execRetrying("BEGIN IMMEDIATE") || !db->exec(kSchema))
            return fail(db->lastError_);
        existing = schemaVersion(); // another process may have created it meanwhile
        if (!existing && !db->exec(("INSERT INTO schema_version(version) VALUES (" +
                                    std::to_string(kSchemaVersion) + ")")
                                       .c_str()))
            return fail(db->lastError_);
        if (!db->exec("COMMIT"))
            return fail(db->lastError_);
    }
    const int version = existing.value_or(kSchemaVersion);
    if (version > kSchemaVersion)
        return fail("schema version " + std::to_string(version) + " is newer than this jointscope reads (" +
                    std::to_string(kSchemaVersion) + ")");
    const std::string lookup =
        "SELECT median_us, min_us, max_us, mean_us, reps, measured_at FROM op_profiles "
        "WHERE device = ?1 AND torch = ?2 AND signature = ?3";
    const std::string store = std::string("INSERT OR REPLACE INTO op_profiles(") + kColumns +
                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    if (sqlite3_prepare_v3(raw, lookup.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &db->lookupStmt_, nullptr) !=
            SQLITE_OK ||
        sqlite3_prepare_v3(raw, store.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &db->storeStmt_, nullptr) !=
            SQLITE_OK)
        return fail(sqlite3_errmsg(raw));
    return db;
}

std::optional<OpStats> ProfileDb::lookup(const ProfileKey& key) const {
    sqlite3_stmt* stmt = lookupStmt_;
    bindText(stmt, 1, key.device);
    bindText(stmt, 2, key.torchVersion);
    bindText(stmt, 3, key.signature);
    std::optional<OpStats> result;
    if (sqlite3_step(stmt) == SQLITE_ROW)
        result = readStats(stmt, 0);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return result;
}

bool ProfileDb::store(const ProfileKey& key, const OpStats& stats) {
    sqlite3_stmt* stmt = storeStmt_;
    bindText(stmt, 1, key.device);
    bindText(stmt, 2, key.torchVersion);
    bindText(stmt, 3, key.signature);
    sqlite3_bind_double(stmt, 4, stats.medianUs);
    sqlite3_bind_double(stmt, 5, stats.minUs);
    sqlite3_bind_double(stmt, 6, stats.maxUs);
    sqlite3_bind_double(stmt, 7, stats.meanUs);
    sqlite3_bind_int(stmt, 8, stats.reps);
    bindText(stmt, 9, stats.measuredAt);
    const bool ok = sqlite3_step(stmt) == SQLITE_DONE;
    if (!ok)
        lastError_ = sqlite3_errmsg(db_);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return ok;
}

void ProfileDb::beginBatch() {
    if (batchDepth_++ == 0 && !exec("BEGIN IMMEDIATE"))
        batchDepth_ = 0; // stores then run one by one: slower, still correct
}

bool ProfileDb::commitBatch() {
    if (batchDepth_ == 0 || --batchDepth_ > 0)
        return true;
    return exec("COMMIT");
}

std::vector<ProfileRecord> ProfileDb::records(std::optional<std::string_view> device) const {
    std::string sql = std::string("SELECT ") + kColumns + " FROM op_profiles";
    if (device)
        sql += " WHERE device = ?1";
    sql += " ORDER BY device, torch, signature";
    sqlite3_stmt* stmt = nullptr;
    std::vector<ProfileRecord> out;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        return out;
    if (device)
        bindText(stmt, 1, *device);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        ProfileRecord r;
        r.key.device = columnText(stmt, 0);
        r.key.torchVersion = columnText(stmt, 1);
        r.key.signature = columnText(stmt, 2);
        r.stats = readStats(stmt, 3);
        out.push_back(std::move(r));
    }
    sqlite3_finalize(stmt);
    return out;
}

size_t ProfileDb::size() const {
    sqlite3_stmt* stmt = nullptr;
    size_t n = 0;
    if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM op_profiles", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
        n = static_cast<size_t>(sqlite3_column_int64(stmt, 0));
    sqlite3_finalize(stmt);
    return n;
}

std::string ProfileDb::exportJson(std::optional<std::string_view> device) const {
    // One record per line: profile files get diffed and merged by hand.
    std::string out = "{\n \"format\": \"" + std::string(kFormat) +
                      "\",\n \"version\": " + std::to_string(kFormatVersion) + ",\n \"records\": [";
    bool first = true;
    for (const ProfileRecord& r : records(device)) {
        Json j = Json::object();
        j["device"] = r.key.device;
        j["torch"] = r.key.torchVersion;
        j["signature"] = r.key.signature;
        j["median_us"] = r.stats.medianUs;
        j["min_us"] = r.stats.minUs;
        j["max_us"] = r.stats.maxUs;
        j["mean_us"] = r.stats.meanUs;
        j["reps"] = r.stats.reps;
        j["measured_at"] = r.stats.measuredAt;
        out += first ? "\n  " : ",\n  ";
        first = false;
        out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    out += first ? "]" : "\n ]";
    std::vector<DevicePeaks> devices = allPeaks();
    if (device)
        std::erase_if(devices, [&](const DevicePeaks& d) { return d.device != *device; });
    if (!devices.empty()) {
        out += ",\n \"devices\": [";
        for (size_t i = 0; i < devices.size(); ++i) {
            Json j = Json::object();
            j["device"] = devices[i].device;
            j["fp32_gflops"] = devices[i].fp32Gflops;
            j["fp64_gflops"] = devices[i].fp64Gflops;
            j["gb_per_s"] = devices[i].gbPerSecond;
            j["measured_at"] = devices[i].measuredAt;
            out += (i ? ",\n  " : "\n  ") + j.dump(-1, ' ', false, Json::error_handler_t::replace);
        }
        out += "\n ]";
    }
    out += "\n}\n";
    return out;
}

bool ProfileDb::storePeaks(const DevicePeaks& peaks) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_,
                           "INSERT OR REPLACE INTO device_peaks(device, fp32_gflops, fp64_gflops, gb_per_s, "
                           "measured_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &stmt, nullptr) != SQLITE_OK) {
        lastError_ = sqlite3_errmsg(db_);
        return false;
    }
    bindText(stmt, 1, peaks.device);
    sqlite3_bind_double(stmt, 2, peaks.fp32Gflops);
    sqlite3_bind_double(stmt, 3, peaks.fp64Gflops);
    sqlite3_bind_double(stmt, 4, peaks.gbPerSecond);
    bindText(stmt, 5, peaks.measuredAt);
    const bool ok = sqlite3_step(stmt) == SQLITE_DONE;
    if (!ok)
        lastError_ = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return ok;
}

std::vector<DevicePeaks> ProfileDb::allPeaks() const {
    std::vector<DevicePeaks> out;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_,
                           "SELECT device, fp32_gflops, fp64_gflops, gb_per_s, measured_at FROM device_peaks "
                           "ORDER BY device",
                           -1, &stmt, nullptr) != SQLITE_OK)
        return out;
    while (sqlite3_step(stmt) == SQLITE_ROW)
        out.push_back({columnText(stmt, 0), columnDouble(stmt, 1), columnDouble(stmt, 2),
                       columnDouble(stmt, 3), columnText(stmt, 4)});
    sqlite3_finalize(stmt);
    return out;
}

std::optional<DevicePeaks> ProfileDb::peaks(std::string_view device) const {
    for (DevicePeaks& p : allPeaks())
        if (p.device == device)
            return std::move(p);
    return std::nullopt;
}

Expected<size_t> ProfileDb::importJson(std::string_view text, std::string_view fileName) {
    const std::string file(fileName);
    Expected<Json> parsed = json_support::parseLocated(text, file);
    if (!parsed)
        return parsed.error();
    const Json& root = *parsed;
    auto topError = [&](std::string_view key, const std::string& message) {
        const size_t open = nthObjectOffset(text, 0);
        const size_t offset = root.is_object() && !key.empty() ? keyOffset(text, open, key) : open;
        return makeError(json_support::locationOf(text, offset, file), message);
    };
    if (!root.is_object())
        return topError("",
                        "expected a jointscope profile: an object with \"format\": \"jointscope-profile\"");
    auto format = root.find("format");
    if (format == root.end() || !format->is_string() || format->get<std::string>() != kFormat)
        return topError("format", "expected \"format\": \"jointscope-profile\"");
    auto version = root.find("version");
    if (version == root.end() || !version->is_number_integer())
        return topError("version", "expected an integer \"version\"");
    if (version->get<int64_t>() != kFormatVersion)
        return topError("version", "profile format version " + version->dump() +
                                       " is not one this jointscope "
                                       "reads (" +
                                       std::to_string(kFormatVersion) + ")");
    auto records = root.find("records");
    if (records == root.end() || !records->is_array())
        return topError("records", "expected a \"records\" array");
    // Everything is checked before anything is stored: a bad file changes nothing.
    std::vector<ProfileRecord> rows;
    rows.reserve(records->size());
    RecordReader reader(text, root, file);
    for (size_t i = 0; i < records->size(); ++i) {
        Expected<ProfileRecord> r = reader.read((*records)[i], i);
        if (!r)
            return r.error();
        rows.push_back(r.take());
    }
    std::vector<DevicePeaks> devices;
    if (auto list = root.find("devices"); list != root.end()) {
        if (!list->is_array())
            return topError("devices", "expected \"devices\" to be an array");
        // Located at the entry, or at its field, like a bad record.
        auto entryError = [&](const Json& d, size_t i, std::string_view field, const std::string& message) {
            size_t ordinal = 0;
            size_t offset = keyOffset(text, nthObjectOffset(text, 0), "devices");
            if (d.is_object() && json_support::detail::objectOrdinal(root, &d, ordinal)) {
                offset = nthObjectOffset(text, ordinal);
                if (!field.empty())
                    offset = keyOffset(text, offset, field);
            }
            std::string where = "devices[" + std::to_string(i) + "]";
            if (!field.empty())
                where += "." + std::string(field);
            return makeError(json_support::locationOf(text, offset, file), where + ": " + message);
        };
        for (size_t i = 0; i < list->size(); ++i) {
            const Json& d = (*list)[i];
            if (!d.is_object())
                return entryError(d, i, "", "must be an object, got " + typeName(d));
            auto name = d.find("device");
            if (name == d.end() || !name->is_string() || name->get<std::string>().empty())
                return entryError(d, i, name == d.end() ? "" : "device", "expected a non-empty device name");
            DevicePeaks p;
            p.device = name->get<std::string>();
            for (auto [field, into] :
                 {std::pair{"fp32_gflops", &p.fp32Gflops}, std::pair{"fp64_gflops", &p.fp64Gflops},
                  std::pair{"gb_per_s", &p.gbPerSecond}}) {
                auto it = d.find(field);
                if (it == d.end())
                    return entryError(d, i, "", std::string("missing field '") + field + "'");
                if (!it->is_number() || !(it->get<double>() > 0))
                    return entryError(d, i, field, "must be a positive number, got " + it->dump());
                *into = it->get<double>();
            }
            if (auto at = d.find("measured_at"); at != d.end() && at->is_string())
                p.measuredAt = at->get<std::string>();
            devices.push_back(std::move(p));
        }
    }
    beginBatch();
    for (const DevicePeaks& p : devices) {
        if (!storePeaks(p)) {
            commitBatch();
            return makeError(SourceLocation{file, 0, 0}, "cannot store device peaks: " + lastError_);
        }
    }
    for (const ProfileRecord& r : rows) {
        if (!store(r.key, r.stats)) {
            commitBatch();
            return makeError(SourceLocation{file, 0, 0}, "cannot store profile records: " + lastError_);
        }
    }
    if (!commitBatch())
        return makeError(SourceLocation{file, 0, 0}, "cannot store profile records: " + lastError_);
    return rows.size();
}

std::string defaultProfileDbPath() {
    if (const char* env = std::getenv("JOINTSCOPE_PROFILE_DB"); env && *env)
        return env;
    std::filesystem::path cache;
    // The XDG spec says to ignore a relative XDG_CACHE_HOME.
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
        cache = xdg;
    } else {
        const char* home = std::getenv("HOME");
        if (!home || !*home) {
            const passwd* pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : nullptr;
        }
        cache = std::filesystem::path(home && *home ? home : ".") / ".cache";
    }
    return (cache / "jointscope" / "profiles.sqlite").string();
}

} // namespace jointscope::cost
