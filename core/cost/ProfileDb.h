// Measured op times, kept in SQLite and shared across graphs, runs and machines.
//
// A row is keyed by (device name, torch version, op signature): "NVIDIA H100 80GB HBM3", "2.11.0",
// opSignature(). Profiles taken on a GPU box travel to a laptop as JSON (docs/formats.md, "Profile DB").
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
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

// One straight piece of a measured collective's time: latencyUs + bytes / bytesPerSecond, for messages up to
// maxBytes (the last piece: any size).
struct CommSegment {
    std::optional<double> maxBytes;
    double latencyUs = 0;
    double bytesPerSecond = 0;
    friend bool operator==(const CommSegment&, const CommSegment&) = default;
};

// A collective timed on one mesh dimension by `python -m jointscope_torch.calibrate` under torchrun, and its
// fit. Keyed by (backend, mesh, dim, collective). Bytes mean what sharding::collectiveUs means by them.
struct CollectiveFit {
    std::string backend;      // "nccl", "gloo"
    std::string torchVersion; // of the calibration run
    std::vector<std::string> hosts;
    int64_t worldSize = 0;
    std::vector<int64_t> mesh;         // the calibrated mesh's shape
    int64_t dim = 0;                   // mesh dimension whose groups ran the collective
    int64_t groupSize = 0;             // mesh[dim]
    std::string collective;            // "all_gather", "reduce_scatter", "all_reduce", "all_to_all"
    std::vector<CommSegment> segments; // by increasing maxBytes
    std::vector<std::pair<double, double>> samples; // (bytes, median us) as measured
    int reps = 0;
    double rmsRelError = 0; // of the fit over the samples
    std::string note;       // how it was timed when not by the collective itself
    std::string measuredAt; // ISO 8601 UTC
    friend bool operator==(const CollectiveFit&, const CollectiveFit&) = default;
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

    // Measured collectives (profile format version 2).
    bool storeCollective(const CollectiveFit& fit);
    std::vector<CollectiveFit> collectives() const; // ordered by backend, mesh, dim, collective

    // Every row, ordered by device, torch version, signature; only one device's rows when device is given.
    std::vector<ProfileRecord> records(std::optional<std::string_view> device = std::nullopt) const;
    size_t size() const;

    // {"format": "jointscope-profile", "version": 1, "records": [{"device", "torch", "signature",
    //  "median_us", "min_us", "max_us", "mean_us", "reps", "measured_at"}, ...],
    //  "devices": [{"device", "fp32_gflops", "fp64_gflops", "gb_per_s", "measured_at"}, ...],
    //  "collectives": [{"backend", "mesh", "dim", "collective", "segments", "samples", ...}, ...]}
    // ("devices" only when peaks were measured; with `device`, only that device's; "collectives", and version
    // 2, only when collectives were measured: version 1 readers keep reading the rest).
    std::string exportJson(std::optional<std::string_view> device = std::nullopt) const;
    // Adds (or replaces) the records (device peaks, measured collectives) of such a JSON text; returns how
    // many records and collectives. A malformed text is refused whole with a located diagnostic
    // (fileName:line:col).
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
