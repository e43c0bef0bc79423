// The events of json_scan and of nlohmann's SAX parser, spelled alike so that the two can be compared
// (tst_jsonscan, fuzz_json_scan).
#pragma once

#include "io/JsonScan.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::json_scan_events {

using Json = nlohmann::ordered_json;
using Events = std::vector<std::string>;

// The fast scan's events, spelled as the nlohmann recorder below spells its own.
struct ScanRecorder {
    Events events;
    bool key(std::string_view name) { return add("key " + std::string(name)); }
    bool string(std::string_view value) { return add("string " + std::string(value)); }
    bool unsignedNumber(uint64_t value) { return add("unsigned " + std::to_string(value)); }
    bool otherNumber() { return add("number"); }
    bool boolean() { return add("boolean"); }
    bool null() { return add("null"); }
    bool startObject() { return add("{"); }
    bool startArray() { return add("["); }
    bool end() { return add("end"); }
    bool add(std::string event) {
        events.push_back(std::move(event));
        return true;
    }
};

// nlohmann's events. A non-negative integer is what the index reads as an id either way (unsigned); a
// negative or a float is only "a number".
struct SaxRecorder final : nlohmann::json_sax<Json> {
    Events events;
    bool null() override { return add("null"); }
    bool boolean(bool) override { return add("boolean"); }
    bool number_integer(number_integer_t v) override {
        return add(v >= 0 ? "unsigned " + std::to_string(v) : "number");
    }
    bool number_unsigned(number_unsigned_t v) override { return add("unsigned " + std::to_string(v)); }
    bool number_float(number_float_t, const string_t&) override { return add("number"); }
    bool string(string_t& v) override { return add("string " + v); }
    bool binary(binary_t&) override { return add("binary"); }
    bool start_object(std::size_t) override { return add("{"); }
    bool end_object() override { return add("end"); }
    bool start_array(std::size_t) override { return add("["); }
    bool end_array() override { return add("end"); }
    bool key(string_t& v) override { return add("key " + v); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
    bool add(std::string event) {
        events.push_back(std::move(event));
        return true;
    }
};

struct Outcome {
    bool fastAccepted = false;
    bool fullAccepted = false;
    bool sameEvents = false;
};

inline Outcome compare(std::string_view text) {
    ScanRecorder fast;
    SaxRecorder full;
    Outcome out;
    out.fastAccepted = json_scan::scan(text, fast, 256);
    out.fullAccepted = Json::sax_parse(text.begin(), text.end(), &full);
    out.sameEvents = fast.events == full.events;
    return out;
}

} // namespace jointscope::json_scan_events
