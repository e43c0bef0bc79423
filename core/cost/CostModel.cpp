#include "cost/CostModel.h"

#include "support/EnumNames.h"

#include <algorithm>

namespace jointscope::cost {

std::string_view costSourceName(CostSource source) {
    static constexpr EnumName<CostSource> kNames[] = {
        {CostSource::Free, "free"}, {CostSource::Roofline, "roofline"}, {CostSource::Profiled, "profiled"}};
    return nameOf(kNames, source, "free");
}

RooflineModel::RooflineModel(DeviceSpec device, Efficiency efficiency, double launchOverheadUs,
                             Fp32Matmul fp32)
    : device_(std::move(device)), efficiency_(efficiency), launchOverheadUs_(launchOverheadUs), fp32_(fp32) {}

double RooflineModel::timeUs(const OpWork& work) const {
    if (work.free)
        return 0;
    const double peak = usesTensorCores(work.opClass) ? peakFlops(device_, work.dtype, fp32_)
                                                      : vectorFlops(device_, work.dtype);
    const double flopRate = peak * efficiency_.compute;
    const double byteRate = device_.memoryBandwidth * efficiency_.memory;
    const double computeUs = flopRate > 0 ? work.flops / flopRate * 1e6 : 0;
    const double memoryUs = byteRate > 0 ? work.bytes() / byteRate * 1e6 : 0;
    return std::max(computeUs, memoryUs) + launchOverheadUs_;
}

NodeCost RooflineModel::cost(const Graph& graph, NodeId id) const {
    NodeCost c;
    c.work = opWork(graph, id);
    c.source = c.work.free ? CostSource::Free : CostSource::Roofline;
    c.timeUs = timeUs(c.work);
    return c;
}

} // namespace jointscope::cost
