// Two partition decisions of one joint graph (decision.json, as `partition --json` prints it and the GUI
// exports it): which tensors moved between saved and recomputed, and what each decision saves.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jointscope::partition {

struct Partition;

struct DecisionDocument {
    std::string file;
    std::string graph;
    std::string decidedBy;
    std::optional<double> memoryBudget;
    std::optional<int64_t> savedBytes;      // inputs (parameters, batch) included
    std::optional<int64_t> activationBytes; // savedBytes less the saved inputs
    std::vector<std::string> saved;         // torch's order
    std::vector<std::string> savedSym;
    std::vector<std::string> recomputed;
    // name -> "torch.ops.aten.addmm.default f32[8, 1024]" for the nodes the document describes
    std::unordered_map<std::string, std::string> nodes;

    std::string describe(const std::string& node) const; // the node's target and shape, or ""
};

// Reads a decision document; what is not one is a located error.
Expected<DecisionDocument> readDecisionDocument(std::string_view text, const std::string& fileName);
// A decision document file; one over 256 MiB is refused.
Expected<DecisionDocument> readDecisionFile(const std::string& path);
// The document of a decision solved here, as decisionJson writes it and readDecisionDocument reads it back,
// without the JSON in between; `file` names where it came from ("torch's decision", "kept at budget 1.0").
DecisionDocument decisionDocumentOf(const Partition& partition, std::string file);
// True when the first bytes look like a decision document ("format": "jointscope-decision").
bool looksLikeDecision(std::string_view head);

struct DecisionDiff {
    std::vector<std::string> savedOnlyA, savedOnlyB; // each in its own document's order
    std::vector<std::string> savedSymOnlyA, savedSymOnlyB;
    std::vector<std::string> recomputedOnlyA, recomputedOnlyB;
    bool sameGraph = true;     // both name the same graph
    bool orderDiffers = false; // the same saved values in another order (the forward's outputs differ)

    bool identical() const {
        return savedOnlyA.empty() && savedOnlyB.empty() && savedSymOnlyA.empty() && savedSymOnlyB.empty() &&
               recomputedOnlyA.empty() && recomputedOnlyB.empty() && !orderDiffers;
    }
};

DecisionDiff diffDecisions(const DecisionDocument& a, const DecisionDocument& b);

// The names of `from` that `other` lacks, in `from`'s order.
std::vector<std::string> namesMissingFrom(const std::vector<std::string>& from,
                                          const std::vector<std::string>& other);

} // namespace jointscope::partition
