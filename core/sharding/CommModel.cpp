#include "sharding/CommModel.h"

#include <algorithm>

namespace jointscope::sharding {
namespace {

std::string meshText(const std::vector<int64_t>& shape) {
    std::string out;
    for (int64_t s : shape)
        out += (out.empty() ? "" : "x") + std::to_string(s);
    return out;
}

// The command that measures `shape`, for error messages.
std::string calibrateCommand(const std::vector<int64_t>& shape) {
    int64_t world = 1;
    for (int64_t s : shape)
        world *= s;
    const std::string mesh = meshText(shape);
    const std::string launch = world <= 8 ? "torchrun --nproc_per_node " + std::to_string(world)
                                          : "torchrun --nnodes NODES --nproc_per_node DEVICES_PER_NODE "
                                            "--rdzv_backend c10d --rdzv_endpoint HOST:29500";
    return launch + " -m jointscope_torch.calibrate --mesh " + mesh +
           " --out comm.json, then jointscope-cli " + "profile-db import comm.json";
}

} // namespace

double segmentsUs(const std::vector<cost::CommSegment>& segments, double bytes) {
    for (const cost::CommSegment& s : segments)
        if (!s.maxBytes || bytes <= *s.maxBytes || &s == &segments.back())
            return s.latencyUs + bytes / s.bytesPerSecond * 1e6;
    return 0;
}

Expected<CommModel> CommModel::measured(const std::vector<cost::CollectiveFit>& fits,
                                        const DeviceMesh& mesh) {
    const std::string shape = meshText(mesh.shape);
    std::vector<const cost::CollectiveFit*> mine;
    std::vector<std::string> others;
    for (const cost::CollectiveFit& f : fits) {
        if (f.mesh == mesh.shape)
            mine.push_back(&f);
        else if (std::find(others.begin(), others.end(), meshText(f.mesh)) == others.end())
            others.push_back(meshText(f.mesh));
    }
    if (mine.empty()) {
        std::string measured;
        for (const std::string& o : others)
            measured += (measured.empty() ? "" : ", ") + o;
        return makeError({}, "no measured collectives for mesh " + shape + " in the profile database (" +
                                 (measured.empty() ? "it has none" : "it has meshes " + measured) +
                                 "); measure them: " + calibrateCommand(mesh.shape));
    }
    // One backend: the most recently calibrated.
    const cost::CollectiveFit* newest = *std::max_element(
        mine.begin(), mine.end(), [](auto* a, auto* b) { return a->measuredAt < b->measuredAt; });
    CommModel model;
    model.segments_.resize(mesh.ndim());
    std::vector<std::string> hosts;
    for (const cost::CollectiveFit* f : mine) {
        if (f->backend != newest->backend || f->dim < 0 || static_cast<size_t>(f->dim) >= mesh.ndim())
            continue;
        for (Collective c :
             {Collective::AllGather, Collective::ReduceScatter, Collective::AllReduce, Collective::AllToAll})
            if (collectiveName(c) == f->collective)
                model.segments_[static_cast<size_t>(f->dim)][static_cast<size_t>(c)] = f->segments;
    }
    for (size_t d = 0; d < mesh.ndim(); ++d) {
        if (mesh.shape[d] < 2)
            continue; // a group of one communicates nothing
        for (Collective c :
             {Collective::AllGather, Collective::ReduceScatter, Collective::AllReduce, Collective::AllToAll})
            if (model.segments_[d][static_cast<size_t>(c)].empty())
                return makeError({}, "the profile database has no measured " +
                                         std::string(collectiveName(c)) + " on dimension " +
                                         std::to_string(d) + " of mesh " + shape + " (" + newest->backend +
                                         "); measure it: " + calibrateCommand(mesh.shape));
    }
    std::string hostText;
    for (const std::string& h : newest->hosts)
        hostText += (hostText.empty() ? "" : ", ") + h;
    model.description_ = "measured " + newest->backend + " " + shape + " (torch " + newest->torchVersion +
                         (hostText.empty() ? "" : ", " + hostText) + ", " + newest->measuredAt + ")";
    return model;
}

double CommModel::us(Collective c, double bytes, size_t meshDim) const {
    if (meshDim >= segments_.size())
        return 0;
    return segmentsUs(segments_[meshDim][static_cast<size_t>(c)], bytes);
}

std::string_view commModelKind(const DeviceMesh& mesh) {
    return mesh.comm ? "measured" : "analytic";
}

std::string commModelDescription(const DeviceMesh& mesh) {
    return mesh.comm ? mesh.comm->description() : "analytic " + mesh.topology + " ring";
}

} // namespace jointscope::sharding
