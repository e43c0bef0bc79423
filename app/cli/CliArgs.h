// The tiny argument parser shared by every jointscope-cli subcommand.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope::cli {

struct OptionSpec {
    std::string_view name;      // "--graph"
    std::string_view shortName; // "-o", or empty
    std::string_view valueName; // "G" when the option takes a value, empty for a flag
    std::string_view help;
    bool required = false; // the synopsis shows it without brackets
};

class ParsedArgs {
public:
    std::vector<std::string> positional;

    bool has(std::string_view option) const;
    // The last value given for option, if any.
    std::optional<std::string> value(std::string_view option) const;
    std::string valueOr(std::string_view option, std::string fallback) const;
    // Every value given for a repeatable option, in order.
    std::vector<std::string> values(std::string_view option) const;

    void add(std::string_view option, std::string value) {
        options_.emplace_back(std::string(option), std::move(value));
    }

private:
    std::vector<std::pair<std::string, std::string>> options_; // long name -> value ("" for flags)
};

// A whole option value as a number: "0.5", "1e-3", "-2". nullopt for empty text, trailing characters, nan
// or a value out of the type's range.
std::optional<double> parseNumber(std::string_view text);
std::optional<int64_t> parseInteger(std::string_view text);

// A typed option read with its range checked: `value` is absent when the option was not given; `error` (a
// usage message naming the option, its range and what was given) is set when it was given wrong.
template <typename T> struct TypedOption {
    std::optional<T> value;
    std::string error;
};
class ParsedArgs;
TypedOption<int64_t> integerOption(const ParsedArgs& args, std::string_view name, int64_t low, int64_t high);
// A number in [low, high]; `lowOpen` excludes low itself ("seconds > 0").
TypedOption<double> numberOption(const ParsedArgs& args, std::string_view name, double low, double high,
                                 bool lowOpen = false);

// Parses args (after the subcommand name): "--name VALUE", "--name=VALUE", "-o VALUE", flags, and
// positionals;
// "--" ends options. Returns the parsed arguments or a usage message.
std::pair<std::optional<ParsedArgs>, std::string> parseArgs(std::span<const std::string> args,
                                                            std::span<const OptionSpec> specs);

} // namespace jointscope::cli
