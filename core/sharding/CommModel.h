// Collective times measured on the user's own machines (python -m jointscope_torch.calibrate under torchrun),
// as a piecewise α-β model per mesh dimension and collective: the measured alternative to the analytic ring
// model of collectiveUs.
#pragma once

#include "cost/ProfileDb.h"
#include "sharding/Cost.h"
#include "support/Diagnostic.h"

#include <array>
#include <string>
#include <vector>

namespace jointscope::sharding {

// latencyUs + bytes / bytesPerSecond of the first segment whose maxBytes holds `bytes` (the last one past
// them all). 0 without segments.
double segmentsUs(const std::vector<cost::CommSegment>& segments, double bytes);

class CommModel {
public:
    // The fits of `fits` measured on a mesh of `mesh`'s shape; of one backend (the most recently measured one
    // when several calibrated this shape). Every dimension of more than one device needs all four
    // collectives: a missing one is an error naming it and the torchrun command that measures it.
    static Expected<CommModel> measured(const std::vector<cost::CollectiveFit>& fits, const DeviceMesh& mesh);

    // The time of collective `c` on `bytes` (collectiveUs's meaning) over mesh dimension `meshDim`.
    double us(Collective c, double bytes, size_t meshDim) const;
    // "measured gloo 2x2 (torch 2.15.0, host1)": what priced the collectives.
    const std::string& description() const { return description_; }

private:
    std::vector<std::array<std::vector<cost::CommSegment>, 4>> segments_; // [mesh dim][collective]
    std::string description_;
};

// "measured" when the mesh carries a measured CommModel, else "analytic".
std::string_view commModelKind(const DeviceMesh& mesh);
// commModelKind with what it was made from: "measured gloo 2x2 (...)" or "analytic h100 ring".
std::string commModelDescription(const DeviceMesh& mesh);

} // namespace jointscope::sharding
