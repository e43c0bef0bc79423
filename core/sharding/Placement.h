// DTensor placements: how one tensor is laid out over each dimension of a device mesh.
//
// Printed and parsed as torch prints them: Shard(d) as "S(d)", Replicate as "R", Partial as "P(sum)" /
// "P(avg)" / "P(max)"; a placement list is the concatenation, one per mesh dimension ("S(0)R").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::sharding {

enum class PlacementKind : uint8_t { Replicate, Shard, Partial };
enum class ReduceOp : uint8_t { Sum, Avg, Max };

struct Placement {
    PlacementKind kind = PlacementKind::Replicate;
    int32_t dim = 0;                 // Shard only
    ReduceOp reduce = ReduceOp::Sum; // Partial only

    static Placement replicate() { return {}; }
    static Placement shard(int32_t d) { return {PlacementKind::Shard, d, ReduceOp::Sum}; }
    static Placement partial(ReduceOp op = ReduceOp::Sum) { return {PlacementKind::Partial, 0, op}; }

    bool isShard() const { return kind == PlacementKind::Shard; }
    bool isShard(int32_t d) const { return kind == PlacementKind::Shard && dim == d; }
    bool isReplicate() const { return kind == PlacementKind::Replicate; }
    bool isPartial() const { return kind == PlacementKind::Partial; }
    std::string str() const;

    friend bool operator==(const Placement& a, const Placement& b) {
        if (a.kind != b.kind)
            return false;
        if (a.kind == PlacementKind::Shard)
            return a.dim == b.dim;
        if (a.kind == PlacementKind::Partial)
            return a.reduce == b.reduce;
        return true;
    }
};

// One placement per mesh dimension.
using Placements = std::vector<Placement>;

std::string_view reduceOpName(ReduceOp op);         // "sum", "avg", "max"
std::string toString(const Placements& placements); // "S(0)R"
// The placements of a node's outputs (or inputs): "S(0)R"; "(S(0)R, RR)" for several; "—" for none.
std::string formatPlacements(const std::vector<Placements>& placements);
// Parses "S(0)R", "P(sum)S(1)", "RR"; also accepts torch's long form ("Shard(dim=0)", "Replicate()",
// "Partial(sum)") with optional ", " / "(" ")" separators. nullopt on anything else.
std::optional<Placements> parsePlacements(std::string_view text);

bool allReplicate(const Placements& placements);
// How many pieces tensor dimension `dim` is cut into: the product of the mesh sizes that shard it.
int64_t shardFactor(const Placements& placements, const std::vector<int64_t>& meshShape, int32_t dim);

} // namespace jointscope::sharding
