// The colour scale of the measured-time heat map. Op times span orders of magnitude (an add takes a few µs,
// a matmul milliseconds): a linear scale paints all but the slowest ops the palest colour, so times are
// mapped by their logarithm between the fastest and the slowest timed op.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace jointscope::views {

struct HeatScale {
    double minUs = 0; // fastest timed op (> 0)
    double maxUs = 0; // slowest timed op

    // Over per-node times where a negative time means "not run"; a time of 0 (below the timer's resolution)
    // is coloured as the fastest but does not stretch the scale.
    static HeatScale of(const std::vector<double>& timesUs) {
        HeatScale scale;
        for (double t : timesUs) {
            if (!(t > 0) || !std::isfinite(t))
                continue;
            scale.minUs = scale.minUs > 0 ? std::min(scale.minUs, t) : t;
            scale.maxUs = std::max(scale.maxUs, t);
        }
        return scale;
    }

    bool valid() const { return maxUs > 0 && minUs > 0; }

    // Position of `us` on the scale: 0 at minUs, 1 at maxUs, linear in log(us); clamped to [0, 1]. When
    // every op took the same time they are all equally the slowest.
    double fraction(double us) const {
        if (!valid() || !(us > 0))
            return 0;
        if (maxUs <= minUs)
            return 1;
        return std::clamp(std::log(us / minUs) / std::log(maxUs / minUs), 0.0, 1.0);
    }

    // Round times inside [minUs, maxUs] for the legend: the powers of ten, or 1-2-5 steps when fewer than two
    // powers of ten fall inside.
    std::vector<double> ticks() const {
        std::vector<double> result;
        if (!valid())
            return result;
        const int first = int(std::floor(std::log10(minUs)));
        const int last = int(std::ceil(std::log10(maxUs)));
        // Relative slack: 1000 must count as inside [1000, 1000.0000001].
        auto inside = [&](double t) { return t >= minUs * (1 - 1e-9) && t <= maxUs * (1 + 1e-9); };
        for (int e = first; e <= last; ++e)
            if (const double t = std::pow(10.0, e); inside(t))
                result.push_back(t);
        if (result.size() >= 2)
            return result;
        result.clear();
        for (int e = first; e <= last; ++e)
            for (double m : {1.0, 2.0, 5.0})
                if (const double t = m * std::pow(10.0, e); inside(t))
                    result.push_back(t);
        return result;
    }
};

} // namespace jointscope::views
