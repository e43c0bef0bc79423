#include "sharding/Placement.h"

#include "support/EnumNames.h"

#include <cctype>

namespace jointscope::sharding {

namespace {
// "" is torch's default reduce op, a sum.
constexpr EnumName<ReduceOp> kReduceNames[] = {
    {ReduceOp::Sum, "sum"}, {ReduceOp::Avg, "avg"}, {ReduceOp::Max, "max"}, {ReduceOp::Sum, ""}};
} // namespace

std::string_view reduceOpName(ReduceOp op) {
    return nameOf(kReduceNames, op, "sum");
}

std::string Placement::str() const {
    switch (kind) {
    case PlacementKind::Replicate:
        return "R";
    case PlacementKind::Shard:
        return "S(" + std::to_string(dim) + ")";
    case PlacementKind::Partial:
        return "P(" + std::string(reduceOpName(reduce)) + ")";
    }
    return "?";
}

std::string toString(const Placements& placements) {
    std::string out;
    for (const Placement& p : placements)
        out += p.str();
    return out;
}

std::string formatPlacements(const std::vector<Placements>& placements) {
    if (placements.empty())
        return "—";
    if (placements.size() == 1)
        return toString(placements[0]);
    std::string out = "(";
    for (size_t i = 0; i < placements.size(); ++i)
        out += (i ? ", " : "") + toString(placements[i]);
    return out + ")";
}

namespace {

struct Cursor {
    std::string_view text;
    size_t pos = 0;

    void skipSeparators() {
        while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',' || text[pos] == '[' ||
                                     text[pos] == ']' || text[pos] == '\t'))
            ++pos;
    }
    bool eat(std::string_view word) {
        if (text.substr(pos, word.size()) != word)
            return false;
        pos += word.size();
        return true;
    }
    std::string_view parenthesized() {
        if (pos >= text.size() || text[pos] != '(')
            return {};
        const size_t close = text.find(')', pos);
        if (close == std::string_view::npos)
            return {};
        std::string_view inside = text.substr(pos + 1, close - pos - 1);
        pos = close + 1;
        return inside;
    }
};

std::optional<int32_t> parseDim(std::string_view s) {
    if (s.starts_with("dim="))
        s.remove_prefix(4);
    if (s.empty() || s.size() > 3)
        return std::nullopt;
    int32_t value = 0;
    for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return std::nullopt;
        value = value * 10 + (c - '0');
    }
    return value;
}

std::optional<ReduceOp> parseReduce(std::string_view s) {
    if (s.starts_with("reduce_op="))
        s.remove_prefix(10);
    if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"'))
        s = s.substr(1, s.size() - 2);
    return valueNamed(kReduceNames, s);
}

} // namespace

std::optional<Placements> parsePlacements(std::string_view text) {
    Cursor c{text};
    Placements out;
    c.skipSeparators();
    if (c.pos < text.size() && text[c.pos] == '(' && text.back() == ')') // "(S(0)R)" as the log prints it
        return parsePlacements(text.substr(1, text.size() - 2));
    while (c.pos < text.size()) {
        if (c.eat("Replicate()") || c.eat("R")) {
            out.push_back(Placement::replicate());
        } else if (c.eat("Shard") || c.eat("S")) {
            std::optional<int32_t> d = parseDim(c.parenthesized());
            if (!d)
                return std::nullopt;
            out.push_back(Placement::shard(*d));
        } else if (c.eat("Partial") || c.eat("P")) {
            std::optional<ReduceOp> op = parseReduce(c.parenthesized());
            if (!op)
                return std::nullopt;
            out.push_back(Placement::partial(*op));
        } else {
            return std::nullopt;
        }
        c.skipSeparators();
    }
    if (out.empty())
        return std::nullopt;
    return out;
}

bool allReplicate(const Placements& placements) {
    for (const Placement& p : placements)
        if (!p.isReplicate())
            return false;
    return true;
}

int64_t shardFactor(const Placements& placements, const std::vector<int64_t>& meshShape, int32_t dim) {
    int64_t factor = 1;
    for (size_t i = 0; i < placements.size() && i < meshShape.size(); ++i)
        if (placements[i].isShard(dim))
            factor *= meshShape[i];
    return factor;
}

} // namespace jointscope::sharding
