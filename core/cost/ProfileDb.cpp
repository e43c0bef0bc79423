#include "cost/ProfileDb.h"

#include "io/JsonSupport.h"

#include <sqlite3.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <thread>

namespace jointscope::cost {
namespace {

using json_support::Json;

constexpr int kSchemaVersion = 1;
constexpr std::string_view kFormat = "jointscope-profile";
constexpr int kFormatVersion = 1;
// Version 2 adds "collectives"; files without them stay version 1.
constexpr int kCollectivesFormatVersion = 2;

// Measured collectives: the key in columns, the rest as the entry's JSON (docs/formats.md), which is what
// import checks and export writes back.
constexpr const char* kCollectiveSchema = R"sql(
CREATE TABLE IF NOT EXISTS collective_fits(
  backend TEXT NOT NULL,
  mesh TEXT NOT NULL,
  dim INTEGER NOT NULL,
  collective TEXT NOT NULL,
  entry TEXT NOT NULL,
  PRIMARY KEY (backend, mesh, dim, collective)
) WITHOUT ROWID;
)sql";

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

// Prepares `sql`, binds its parameters with `bind` and runs it once; false, with SQLite's message in
// `lastError`, when it cannot.
bool writeOnce(sqlite3* db, const char* sql, std::string& lastError,
               const std::function<void(sqlite3_stmt*)>& bind) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
        lastError = sqlite3_errmsg(db);
        return false;
    }
    bind(stmt);
    const bool ok = sqlite3_step(stmt) == SQLITE_DONE;
    if (!ok)
        lastError = sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    return ok;
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

// An error at entry `index` of the top-level array `list` ("records[3].median_us: ..."): at the entry's
// field, else at the entry, else (an entry that is not an object has no '{' to point at) at the list's key.
Diagnostic entryError(std::string_view text, const Json& root, const std::string& file, std::string_view list,
                      const Json& entry, size_t index, std::string_view field, const std::string& message) {
    size_t offset = keyOffset(text, nthObjectOffset(text, 0), list);
    size_t ordinal = 0;
    if (entry.is_object() && json_support::detail::objectOrdinal(root, &entry, ordinal)) {
        offset = nthObjectOffset(text, ordinal);
        if (!field.empty())
            offset = keyOffset(text, offset, field);
    }
    std::string where = std::string(list) + "[" + std::to_string(index) + "]";
    if (!field.empty())
        where += "." + std::string(field);
    return makeError(json_support::locationOf(text, offset, file), where + ": " + message);
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
        // The field, or null when it is absent (a problem when it is required) or a problem came first.
        auto find = [&](const char* field, bool required) -> const Json* {
            if (problem)
                return nullptr;
            auto it = record.find(field);
            if (it == record.end()) {
                if (required)
                    problem = error("", std::string("missing field '") + field + "'");
                return nullptr;
            }
            return &*it;
        };
        auto readText = [&](const char* field, std::string& into, bool required) {
            const Json* it = find(field, required);
            if (!it)
                return;
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
            const Json* it = find(field, required);
            if (!it)
                return;
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
        return entryError(text_, root_, fileName_, "records", *record_, index_, field, message);
    }

    std::string_view text_;
    const Json& root_;
    const std::string& fileName_;
    const Json* record_ = nullptr;
    size_t index_ = 0;
};

std::string meshText(const std::vector<int64_t>& mesh) {
    std::string out;
    for (int64_t s : mesh)
        out += (out.empty() ? "" : "x") + std::to_string(s);
    return out;
}

Json collectiveJson(const CollectiveFit& f) {
    Json j = Json::object();
    j["backend"] = f.backend;
    j["torch"] = f.torchVersion;
    j["hosts"] = f.hosts;
    j["world_size"] = f.worldSize;
    j["mesh"] = f.mesh;
    j["dim"] = f.dim;
    j["group_size"] = f.groupSize;
    j["collective"] = f.collective;
    Json segments = Json::array();
    for (const CommSegment& s : f.segments)
        segments.push_back({{"max_bytes", s.maxBytes ? Json(*s.maxBytes) : Json(nullptr)},
                            {"latency_us", s.latencyUs},
                            {"bytes_per_s", s.bytesPerSecond}});
    j["segments"] = segments;
    Json samples = Json::array();
    for (const auto& [bytes, us] : f.samples)
        samples.push_back({bytes, us});
    j["samples"] = samples;
    j["reps"] = f.reps;
    j["rms_rel_error"] = f.rmsRelError;
    if (!f.note.empty())
        j["note"] = f.note;
    j["measured_at"] = f.measuredAt;
    return j;
}

// Checks one "collectives" entry; `error(field, message)` locates a problem.
template <typename ErrorFn> Expected<CollectiveFit> readCollective(const Json& e, ErrorFn error) {
    if (!e.is_object())
        return error("", "must be an object, got " + typeName(e));
    static constexpr std::string_view kKnown[] = {
        "backend",    "torch",    "hosts",   "world_size", "mesh",          "dim",  "group_size",
        "collective", "segments", "samples", "reps",       "rms_rel_error", "note", "measured_at"};
    for (const auto& item : e.items())
        if (std::find(std::begin(kKnown), std::end(kKnown), item.key()) == std::end(kKnown))
            return error(item.key(),
                         "unknown field (expected one of backend, torch, hosts, world_size, mesh, "
                         "dim, group_size, collective, segments, samples, reps, rms_rel_error, "
                         "note, measured_at)");
    CollectiveFit f;
    auto text = [&](const char* field, std::string& into, bool required) -> std::optional<Diagnostic> {
        auto it = e.find(field);
        if (it == e.end())
            return required ? std::optional(error("", std::string("missing field '") + field + "'"))
                            : std::nullopt;
        if (!it->is_string() || (required && it->get<std::string>().empty()))
            return error(field, "must be a non-empty string, got " + it->dump());
        into = it->get<std::string>();
        return std::nullopt;
    };
    auto integer = [&](const char* field, int64_t& into, int64_t low) -> std::optional<Diagnostic> {
        auto it = e.find(field);
        if (it == e.end())
            return error("", std::string("missing field '") + field + "'");
        if (!it->is_number_integer() || it->get<int64_t>() < low)
            return error(field, "must be an integer >= " + std::to_string(low) + ", got " + it->dump());
        into = it->get<int64_t>();
        return std::nullopt;
    };
    for (auto problem : {text("backend", f.backend, true), text("torch", f.torchVersion, false),
                         text("collective", f.collective, true), text("note", f.note, false),
                         text("measured_at", f.measuredAt, false), integer("world_size", f.worldSize, 1),
                         integer("dim", f.dim, 0), integer("group_size", f.groupSize, 1)})
        if (problem)
            return *problem;
    static constexpr std::string_view kCollectives[] = {"all_gather", "reduce_scatter", "all_reduce",
                                                        "all_to_all"};
    if (std::find(std::begin(kCollectives), std::end(kCollectives), f.collective) == std::end(kCollectives))
        return error("collective", "must be all_gather, reduce_scatter, all_reduce or all_to_all, got \"" +
                                       f.collective + "\"");
    if (auto hosts = e.find("hosts"); hosts != e.end()) {
        if (!hosts->is_array())
            return error("hosts", "must be an array of host names");
        for (const Json& h : *hosts) {
            if (!h.is_string())
                return error("hosts", "must be an array of host names, got " + h.dump());
            f.hosts.push_back(h.get<std::string>());
        }
    }
    auto mesh = e.find("mesh");
    if (mesh == e.end())
        return error("", "missing field 'mesh'");
    if (!mesh->is_array() || mesh->empty())
        return error("mesh", "must be the mesh shape, an array of positive sizes like [2, 4]");
    for (const Json& m : *mesh) {
        if (!m.is_number_integer() || m.get<int64_t>() < 1)
            return error("mesh", "must be the mesh shape, an array of positive sizes like [2, 4]");
        f.mesh.push_back(m.get<int64_t>());
    }
    if (f.dim >= static_cast<int64_t>(f.mesh.size()))
        return error("dim", "mesh " + meshText(f.mesh) + " has no dimension " + std::to_string(f.dim));
    if (f.groupSize != f.mesh[static_cast<size_t>(f.dim)])
        return error("group_size", "must be the size of mesh dimension " + std::to_string(f.dim) + " (" +
                                       std::to_string(f.mesh[static_cast<size_t>(f.dim)]) + ")");
    auto segments = e.find("segments");
    if (segments == e.end())
        return error("", "missing field 'segments'");
    if (!segments->is_array() || segments->empty())
        return error("segments", "must be a non-empty array of {max_bytes, latency_us, bytes_per_s}");
    for (size_t i = 0; i < segments->size(); ++i) {
        const Json& s = (*segments)[i];
        const bool last = i + 1 == segments->size();
        const std::string where = "segments[" + std::to_string(i) + "]";
        if (!s.is_object() || !s.contains("latency_us") || !s.contains("bytes_per_s") ||
            !s.contains("max_bytes") || s.size() != 3)
            return error("segments", where + " must be {max_bytes, latency_us, bytes_per_s}");
        const Json &lat = s["latency_us"], &bw = s["bytes_per_s"], &max = s["max_bytes"];
        if (!lat.is_number() || !(lat.get<double>() >= 0) || !bw.is_number() || !(bw.get<double>() > 0))
            return error("segments", where + ": latency_us must be >= 0 and bytes_per_s > 0");
        CommSegment seg{std::nullopt, lat.get<double>(), bw.get<double>()};
        if (last != max.is_null() ||
            (!last && (!max.is_number() ||
                       (!f.segments.empty() && !(max.get<double>() > *f.segments.back().maxBytes)))))
            return error("segments", where + ".max_bytes: null on the last segment only, increasing numbers "
                                             "before it");
        if (!last)
            seg.maxBytes = max.get<double>();
        f.segments.push_back(seg);
    }
    if (auto samples = e.find("samples"); samples != e.end()) {
        if (!samples->is_array())
            return error("samples", "must be an array of [bytes, us] pairs");
        for (const Json& p : *samples) {
            if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
                return error("samples", "must be an array of [bytes, us] pairs, got " + p.dump());
            f.samples.emplace_back(p[0].get<double>(), p[1].get<double>());
        }
    }
    if (auto reps = e.find("reps"); reps != e.end()) {
        if (!reps->is_number_integer() || reps->get<int64_t>() < 0 ||
            reps->get<int64_t>() > std::numeric_limits<int>::max())
            return error("reps", "must be a non-negative integer, got " + reps->dump());
        f.reps = static_cast<int>(reps->get<int64_t>());
    }
    if (auto err = e.find("rms_rel_error"); err != e.end()) {
        if (!err->is_number())
            return error("rms_rel_error", "must be a number, got " + err->dump());
        f.rmsRelError = err->get<double>();
    }
    return f;
}

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
    // Switching to WAL needs the file to itself and answers SQLITE_BUSY at once (no busy handler) while
    // another process opens it: retry within the same time limit. A file already in WAL mode stays as it is.
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
        if (!existing &&
            !db->exec(("INSERT INTO schema_version(version) VALUES (" + std::to_string(kSchemaVersion) + ")")
                          .c_str()))
            return fail(db->lastError_);
        if (!db->exec("COMMIT"))
            return fail(db->lastError_);
    }
    // Files made before measured collectives get their table when first opened (written only then).
    {
        sqlite3_stmt* stmt = nullptr;
        bool present = false;
        if (sqlite3_prepare_v2(raw, "SELECT 1 FROM sqlite_master WHERE name = 'collective_fits'", -1, &stmt,
                               nullptr) == SQLITE_OK)
            present = sqlite3_step(stmt) == SQLITE_ROW;
        sqlite3_finalize(stmt);
        if (!present && !db->execRetrying(kCollectiveSchema))
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
    const std::vector<CollectiveFit> fits = device ? std::vector<CollectiveFit>{} : collectives();
    std::string out = "{\n \"format\": \"" + std::string(kFormat) + "\",\n \"version\": " +
                      std::to_string(fits.empty() ? kFormatVersion : kCollectivesFormatVersion) +
                      ",\n \"records\": [";
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
    if (!fits.empty()) {
        out += ",\n \"collectives\": [";
        for (size_t i = 0; i < fits.size(); ++i)
            out += (i ? ",\n  " : "\n  ") +
                   collectiveJson(fits[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
        out += "\n ]";
    }
    out += "\n}\n";
    return out;
}

bool ProfileDb::storeCollective(const CollectiveFit& fit) {
    return writeOnce(db_,
                     "INSERT OR REPLACE INTO collective_fits(backend, mesh, dim, collective, entry) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)",
                     lastError_, [&](sqlite3_stmt* stmt) {
                         bindText(stmt, 1, fit.backend);
                         bindText(stmt, 2, meshText(fit.mesh));
                         sqlite3_bind_int64(stmt, 3, fit.dim);
                         bindText(stmt, 4, fit.collective);
                         bindText(stmt, 5,
                                  collectiveJson(fit).dump(-1, ' ', false, Json::error_handler_t::replace));
                     });
}

std::vector<CollectiveFit> ProfileDb::collectives() const {
    std::vector<CollectiveFit> out;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT entry FROM collective_fits ORDER BY backend, mesh, dim, collective",
                           -1, &stmt, nullptr) != SQLITE_OK)
        return out;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        // Entries were checked on import; one edited by hand into something unreadable is left out.
        Json j = Json::parse(columnText(stmt, 0), nullptr, false);
        Expected<CollectiveFit> fit = readCollective(
            j, [](std::string_view, const std::string& m) { return makeError(SourceLocation{}, m); });
        if (fit)
            out.push_back(fit.take());
    }
    sqlite3_finalize(stmt);
    return out;
}

bool ProfileDb::storePeaks(const DevicePeaks& peaks) {
    return writeOnce(db_,
                     "INSERT OR REPLACE INTO device_peaks(device, fp32_gflops, fp64_gflops, gb_per_s, "
                     "measured_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                     lastError_, [&](sqlite3_stmt* stmt) {
                         bindText(stmt, 1, peaks.device);
                         sqlite3_bind_double(stmt, 2, peaks.fp32Gflops);
                         sqlite3_bind_double(stmt, 3, peaks.fp64Gflops);
                         sqlite3_bind_double(stmt, 4, peaks.gbPerSecond);
                         bindText(stmt, 5, peaks.measuredAt);
                     });
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
    if (version->get<int64_t>() != kFormatVersion && version->get<int64_t>() != kCollectivesFormatVersion)
        return topError("version", "profile format version " + version->dump() +
                                       " is not one this jointscope reads (" +
                                       std::to_string(kFormatVersion) + " or " +
                                       std::to_string(kCollectivesFormatVersion) + ")");
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
        auto deviceError = [&](const Json& d, size_t i, std::string_view field, const std::string& message) {
            return entryError(text, root, file, "devices", d, i, field, message);
        };
        for (size_t i = 0; i < list->size(); ++i) {
            const Json& d = (*list)[i];
            if (!d.is_object())
                return deviceError(d, i, "", "must be an object, got " + typeName(d));
            auto name = d.find("device");
            if (name == d.end() || !name->is_string() || name->get<std::string>().empty())
                return deviceError(d, i, name == d.end() ? "" : "device", "expected a non-empty device name");
            DevicePeaks p;
            p.device = name->get<std::string>();
            for (auto [field, into] :
                 {std::pair{"fp32_gflops", &p.fp32Gflops}, std::pair{"fp64_gflops", &p.fp64Gflops},
                  std::pair{"gb_per_s", &p.gbPerSecond}}) {
                auto it = d.find(field);
                if (it == d.end())
                    return deviceError(d, i, "", std::string("missing field '") + field + "'");
                if (!it->is_number() || !(it->get<double>() > 0))
                    return deviceError(d, i, field, "must be a positive number, got " + it->dump());
                *into = it->get<double>();
            }
            if (auto at = d.find("measured_at"); at != d.end() && at->is_string())
                p.measuredAt = at->get<std::string>();
            devices.push_back(std::move(p));
        }
    }
    std::vector<CollectiveFit> fits;
    if (auto list = root.find("collectives"); list != root.end()) {
        if (version->get<int64_t>() < kCollectivesFormatVersion)
            return topError("collectives", "\"collectives\" needs \"version\": 2");
        if (!list->is_array())
            return topError("collectives", "expected \"collectives\" to be an array");
        for (size_t i = 0; i < list->size(); ++i) {
            const Json& e = (*list)[i];
            Expected<CollectiveFit> fit =
                readCollective(e, [&](std::string_view field, const std::string& message) {
                    return entryError(text, root, file, "collectives", e, i, field, message);
                });
            if (!fit)
                return fit.error();
            fits.push_back(fit.take());
        }
    }
    beginBatch();
    for (const CollectiveFit& f : fits) {
        if (!storeCollective(f)) {
            commitBatch();
            return makeError(SourceLocation{file, 0, 0}, "cannot store measured collectives: " + lastError_);
        }
    }
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
    return rows.size() + fits.size();
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
