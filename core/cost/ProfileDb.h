// Measured op times, kept in SQLite and shared across graphs, runs and machines.
//
// A row is keyed by (device name, torch version, op signature): "NVIDIA H100 80GB HBM3", "2.11.0",
// opSignature(). Profiles taken on a GPU box travel to a laptop as JSON (docs/formats.md, "Profile DB").
#pragma once

#include "support/Diagnostic.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace jointscope::cost {

struct ProfileKey {
    std::string device;       // device name as the runtime reports it
    std::string torchVersion; // "1.13.1", "2.11.0+cu130"
    std::string signature;    // cost::opSignature
    friend bool operator==(const ProfileKey&, const ProfileKey&) = default;
};

// Statistics of the timed repetitions of one signature, in microseconds.
struct OpStats {
    double medianUs = 0;
    double minUs = 0;
    double maxUs = 0;
    double meanUs = 0;
    int reps = 0;
    std::string measuredAt; // ISO 8601 UTC, "2026-11-23T03:10:00Z"
    friend bool operator==(const OpStats&, const OpStats&) = default;
};

struct ProfileRecord {
    ProfileKey key;
    OpStats stats;
};

// A device's peak rates, measured once (`jointscope-cli devices --measure`): what the roofline assumes for a
// CPU, which no table can know.
struct DevicePeaks {
    std::string device;     // device name as the runtime reports it
    double fp32Gflops = 0;  // large fp32 matmul
    double fp64Gflops = 0;  // large fp64 matmul
    double gbPerSecond = 0; // large copy, bytes read + written
    std::string measuredAt; // ISO 8601 UTC
    friend bool operator==(const DevicePeaks&, const DevicePeaks&) = default;
};

class ProfileDb {
public:
    // How long a write waits for another process's transaction before it fails.
    static constexpr int kBusyTimeoutMs = 60000;

    // Opens or creates the database at path (":memory:" for a private one) and its schema, creating the
    // directory too. The error names the file and SQLite's message. One ProfileDb per thread: SQLite
    // connections and prepared statements are not shared.
    static Expected<std::unique_ptr<ProfileDb>> open(const std::string& path);
    ~ProfileDb();
    ProfileDb(const ProfileDb&) = delete;
    ProfileDb& operator=(const ProfileDb&) = delete;

    std::optional<OpStats> lookup(const ProfileKey& key) const;
    // Inserts or replaces one row, in its own short transaction unless a batch is open (another process's
    // write is waited for, up to kBusyTimeoutMs). False when SQLite refused it (disk full, read-only file,
    // still locked): lastError() says why.
    bool store(const ProfileKey& key, const OpStats& stats);
    // Groups many stores into one transaction (imports). Batches nest: the outermost commitBatch commits. The
    // destructor commits a batch left open. A batch holds the write lock until it commits: keep it short.
    void beginBatch();
    bool commitBatch();
    // SQLite's message for the last failed store / commit.
    const std::string& lastError() const { return lastError_; }

    bool storePeaks(const DevicePeaks& peaks);
    std::optional<DevicePeaks> peaks(std::string_view device) const;
    std::vector<DevicePeaks> allPeaks() const; // ordered by device

    // Every row, ordered by device, torch version, signature; only one device's rows when device is given.
    std::vector<ProfileRecord> records(std::optional<std::string_view> device = std::nullopt) const;
    size_t size() const;

    // {"format": "jointscope-profile", "version": 1, "records": [{"device", "torch", "signature",
    //  "median_us", "min_us", "max_us", "mean_us", "reps", "measured_at"}, ...],
    //  "devices": [{"device", "fp32_gflops", "fp64_gflops", "gb_per_s", "measured_at"}, ...]}
    // ("devices" only when peaks were measured; with `device`, only that device's).
    std::string exportJson(std::optional<std::string_view> device = std::nullopt) const;
    // Adds (or replaces) the records (and device peaks) of such a JSON text; returns how many records. A
    // malformed text is refused whole with a located diagnostic (fileName:line:col).
    Expected<size_t> importJson(std::string_view text, std::string_view fileName);

private:
    explicit ProfileDb(sqlite3* db);
    bool exec(const char* sql);
    // exec, retried while another connection holds the lock SQLite's busy handler does not wait for.
    bool execRetrying(const char* sql);

    sqlite3* db_ = nullptr;
    // Prepared once: lookups and stores run per op, thousands of times per graph.
    sqlite3_stmt* lookupStmt_ = nullptr;
    sqlite3_stmt* storeStmt_ = nullptr;
    int batchDepth_ = 0;
    std::string lastError_;
};

// $JOINTSCOPE_PROFILE_DB, else $XDG_CACHE_HOME/jointscope/profiles.sqlite, else ~/.cache/jointscope/...
std::string defaultProfileDbPath();

} // namespace jointscope::cost
