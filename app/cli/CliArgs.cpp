#include "CliArgs.h"

#include <charconv>
#include <cstdio>

namespace jointscope::cli {

std::optional<double> parseNumber(std::string_view text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value != value)
        return std::nullopt;
    return value;
}

std::optional<int64_t> parseInteger(std::string_view text) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

TypedOption<int64_t> integerOption(const ParsedArgs& args, std::string_view name, int64_t low, int64_t high) {
    TypedOption<int64_t> out;
    const std::optional<std::string> text = args.value(name);
    if (!text)
        return out;
    out.value = parseInteger(*text);
    if (!out.value || *out.value < low || *out.value > high) {
        out.value.reset();
        out.error = std::string(name) + " takes an integer in [" + std::to_string(low) + ", " +
                    std::to_string(high) + "]; got '" + *text + "'";
    }
    return out;
}

TypedOption<double> numberOption(const ParsedArgs& args, std::string_view name, double low, double high,
                                 bool lowOpen) {
    TypedOption<double> out;
    const std::optional<std::string> text = args.value(name);
    if (!text)
        return out;
    out.value = parseNumber(*text);
    if (!out.value || *out.value > high || *out.value < low || (lowOpen && *out.value == low)) {
        out.value.reset();
        char range[96];
        std::snprintf(range, sizeof range, "%s%g, %g]", lowOpen ? "(" : "[", low, high);
        out.error = std::string(name) + " takes a number in " + range + "; got '" + *text + "'";
    }
    return out;
}

bool ParsedArgs::has(std::string_view option) const {
    for (const auto& [name, value] : options_)
        if (name == option)
            return true;
    return false;
}

std::optional<std::string> ParsedArgs::value(std::string_view option) const {
    for (auto it = options_.rbegin(); it != options_.rend(); ++it)
        if (it->first == option)
            return it->second;
    return std::nullopt;
}

std::vector<std::string> ParsedArgs::values(std::string_view option) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : options_)
        if (name == option)
            out.push_back(value);
    return out;
}

std::string ParsedArgs::valueOr(std::string_view option, std::string fallback) const {
    std::optional<std::string> v = value(option);
    return v ? *v : std::move(fallback);
}

std::pair<std::optional<ParsedArgs>, std::string> parseArgs(std::span<const std::string> args,
                                                            std::span<const OptionSpec> specs) {
    ParsedArgs parsed;
    bool optionsEnded = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
            parsed.positional.push_back(arg);
            continue;
        }
        if (arg == "--") {
            optionsEnded = true;
            continue;
        }
        const size_t equals = arg.find('=');
        const std::string_view name = std::string_view(arg).substr(0, equals);
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs)
            if (s.name == name || (!s.shortName.empty() && s.shortName == name))
                spec = &s;
        if (!spec)
            return {std::nullopt, "unknown option '" + std::string(name) + "'"};
        if (spec->valueName.empty()) {
            if (equals != std::string::npos)
                return {std::nullopt, "option '" + std::string(spec->name) + "' takes no value"};
            parsed.add(spec->name, "");
        } else if (equals != std::string::npos) {
            parsed.add(spec->name, arg.substr(equals + 1));
        } else if (i + 1 < args.size()) {
            parsed.add(spec->name, args[++i]);
        } else {
            return {std::nullopt, "option '" + std::string(spec->name) + "' expects a value " +
                                      std::string(spec->valueName)};
        }
    }
    return {std::move(parsed), std::string()};
}

} // namespace jointscope::cli
