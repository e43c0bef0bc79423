#include "sharding/Mesh.h"

#include <algorithm>
#include <cctype>

namespace jointscope::sharding {

namespace {
constexpr double kGB = 1e9;
}

std::vector<Topology> knownTopologies() {
    // bw_intra: NCCL's per-channel NVLink bandwidth x default channels (A100 87.7, H100 320, B200 640 GB/s);
    // bw_inter: 200 Gb/s NICs (25 GB/s) on A100 clusters, 400 Gb/s (50 GB/s) on H100 and GB200; GPUs per node
    // 8 (A100, H100) and 72 (GB200 NVL72). Latencies: Ring/Simple base 8.4 us, NVLink step 3.4 us, network
    // step 14 us (NCCL tuning.cc baseLatencies / hwLatencies).
    return {
        Topology{"h100", 8, 320 * kGB, 50 * kGB, 8.4, 3.4, 14.0},
        Topology{"a100", 8, 87.7 * kGB, 25 * kGB, 8.4, 3.4, 14.0},
        Topology{"gb200", 72, 640 * kGB, 50 * kGB, 8.4, 3.4, 14.0},
    };
}

std::optional<Topology> findTopology(std::string_view name) {
    std::string lower;
    for (char c : name)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (Topology& t : knownTopologies())
        if (t.name == lower)
            return t;
    return std::nullopt;
}

int64_t DeviceMesh::size() const {
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return n;
}

std::string DeviceMesh::str() const {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i)
        out += (i ? "x" : "") + std::to_string(shape[i]);
    out += " (";
    for (size_t i = 0; i < names.size(); ++i)
        out += (i ? ", " : "") + names[i];
    out += ") " + topology;
    return out;
}

DeviceMesh DeviceMesh::make(std::vector<int64_t> shape, std::vector<std::string> names,
                            const Topology& topo) {
    DeviceMesh mesh;
    mesh.shape = std::move(shape);
    mesh.names = std::move(names);
    for (size_t i = mesh.names.size(); i < mesh.shape.size(); ++i)
        mesh.names.push_back("d" + std::to_string(i));
    mesh.names.resize(mesh.shape.size());
    mesh.topology = topo.name;
    for (size_t i = 0; i < mesh.shape.size(); ++i) {
        int64_t inner = 1;
        for (size_t j = i + 1; j < mesh.shape.size(); ++j)
            inner *= mesh.shape[j];
        const int64_t perNode =
            std::clamp<int64_t>(topo.gpusPerNode / std::max<int64_t>(inner, 1), 1, mesh.shape[i]);
        MeshLink link;
        link.interNode = mesh.shape[i] / perNode > 1;
        link.bandwidth = link.interNode ? topo.interBandwidth : topo.intraBandwidth;
        link.latencyUs = topo.baseLatencyUs;
        link.stepLatencyUs = link.interNode ? topo.interStepLatencyUs : topo.intraStepLatencyUs;
        mesh.links.push_back(link);
    }
    return mesh;
}

std::optional<std::vector<int64_t>> parseMeshShape(std::string_view text) {
    std::vector<int64_t> shape;
    int64_t current = 0;
    bool digits = false;
    for (size_t i = 0; i <= text.size(); ++i) {
        const char c = i < text.size() ? text[i] : 'x';
        if (std::isdigit(static_cast<unsigned char>(c))) {
            current = current * 10 + (c - '0');
            digits = true;
            if (current > (1 << 20))
                return std::nullopt;
        } else if (c == 'x' || c == 'X' || c == ',') {
            if (!digits || current <= 0)
                return std::nullopt;
            shape.push_back(current);
            current = 0;
            digits = false;
        } else {
            return std::nullopt;
        }
    }
    if (shape.empty() || shape.size() > 4)
        return std::nullopt;
    return shape;
}

} // namespace jointscope::sharding
