#include "io/Session.h"

#include "io/JsonSupport.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

namespace jointscope {
namespace {

using json_support::Json;

constexpr std::string_view kFormat = "jointscope-session";
constexpr uintmax_t kMaxSessionBytes = uintmax_t(64) << 20; // window state included, sessions are KBs

// Turns a parsed document into a SessionFile, pointing every refusal at the key it is about.
class SessionReader {
public:
    SessionReader(std::string_view text, const Json& root, const std::string& fileName)
        : text_(text), root_(root), fileName_(fileName) {}

    Expected<SessionFile> read() {
        if (!root_.is_object())
            return fail(nullptr, {}, "a session is a JSON object");
        SessionFile s;
        const Json* format = find(root_, "format");
        if (!format || !format->is_string() || format->get<std::string>() != kFormat)
            return fail(&root_, "format",
                        "not a jointscope session (\"format\" is not \"jointscope-session\")");
        const Json* version = find(root_, "version");
        const std::string supported = std::to_string(kSessionVersion);
        if (!version)
            return fail(&root_, {}, "session has no \"version\"; this build reads version " + supported);
        if (!version->is_number_integer() || (version->is_number_unsigned() && !fitsInt64(*version)))
            return fail(&root_, "version", "\"version\" is " + version->dump() + ", not an integer");
        s.version = version->get<int64_t>();
        if (s.version != kSessionVersion)
            return fail(&root_, "version",
                        "session version " + std::to_string(s.version) +
                            " is not supported; this build reads "
                            "version " +
                            supported +
                            (s.version > kSessionVersion ? " (written by a newer jointscope?)" : ""));

        const Json* graph = object(root_, "graph");
        if (!ok_)
            return error_;
        if (graph) {
            s.graphPath = string(*graph, "path", "");
            s.graphIndex = integer(*graph, "index", 0);
        }
        if (!ok_)
            return error_;
        if (s.graphPath.empty())
            return fail(graph ? graph : &root_, graph ? "path" : "",
                        "session names no graph file (graph.path)");
        if (s.graphIndex < 0)
            return fail(graph, "index", "graph.index is " + std::to_string(s.graphIndex) + ", below 0");

        if (const Json* options = object(root_, "options")) {
            s.ruleset = string(*options, "ruleset", s.ruleset);
            s.strategy = string(*options, "strategy", s.strategy);
            s.memoryBudget = number(*options, "memory_budget", s.memoryBudget);
            s.solver = string(*options, "solver", s.solver);
        }
        if (const Json* policies = object(root_, "policies"))
            s.policies = stringMap(*policies, "policies");
        if (const Json* sharding = object(root_, "sharding"))
            s.sharding = readSharding(*sharding);
        if (const Json* view = object(root_, "view"))
            for (const auto& [key, value] : view->items())
                if (value.is_string())
                    s.view[key] = value.get<std::string>();
        if (!ok_)
            return error_;
        return s;
    }

private:
    SessionSharding readSharding(const Json& sharding) {
        SessionSharding s;
        if (const Json* mesh = object(sharding, "mesh")) {
            if (const Json* shape = array(*mesh, "shape"))
                for (const Json& d : *shape) {
                    if (!d.is_number_integer() || !fitsInt64(d)) {
                        fail(mesh, "shape", "sharding.mesh.shape holds " + d.dump() + ", not a size");
                        return s;
                    }
                    s.shape.push_back(d.get<int64_t>());
                }
            if (const Json* names = array(*mesh, "names"))
                for (const Json& n : *names) {
                    if (!n.is_string()) {
                        fail(mesh, "names", "sharding.mesh.names holds " + n.dump() + ", not a name");
                        return s;
                    }
                    s.names.push_back(n.get<std::string>());
                }
            s.topology = string(*mesh, "topology", s.topology);
        }
        if (const Json* pins = object(sharding, "pins"))
            s.pins = stringMap(*pins, "sharding.pins");
        if (const Json* solved = find(sharding, "solved")) {
            if (solved->is_boolean())
                s.solved = solved->get<bool>();
            else
                fail(&sharding, "solved", "sharding.solved is " + solved->dump() + ", not true or false");
        }
        return s;
    }

    static bool fitsInt64(const Json& j) {
        return !j.is_number_unsigned() ||
               j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }

    static const Json* find(const Json& object, std::string_view key) {
        const auto it = object.find(key);
        return it == object.end() ? nullptr : &*it;
    }

    // The member `key` of `parent` when it is an object (an array); null when absent (or after a refusal).
    const Json* object(const Json& parent, std::string_view key) { return container(parent, key, false); }
    const Json* array(const Json& parent, std::string_view key) { return container(parent, key, true); }

    const Json* container(const Json& parent, std::string_view key, bool isArray) {
        const Json* j = find(parent, key);
        if (!j || !ok_)
            return nullptr;
        if (isArray ? !j->is_array() : !j->is_object()) {
            fail(&parent, key,
                 "\"" + std::string(key) + "\" is " + j->dump() +
                     (isArray ? ", not an array" : ", not an object"));
            return nullptr;
        }
        return j;
    }

    std::string string(const Json& parent, std::string_view key, std::string fallback) {
        const Json* j = find(parent, key);
        if (!j)
            return fallback;
        if (!j->is_string()) {
            fail(&parent, key, "\"" + std::string(key) + "\" is " + j->dump() + ", not a string");
            return fallback;
        }
        return j->get<std::string>();
    }

    int64_t integer(const Json& parent, std::string_view key, int64_t fallback) {
        const Json* j = find(parent, key);
        if (!j)
            return fallback;
        if (!j->is_number_integer() || !fitsInt64(*j)) {
            fail(&parent, key, "\"" + std::string(key) + "\" is " + j->dump() + ", not an integer");
            return fallback;
        }
        return j->get<int64_t>();
    }

    double number(const Json& parent, std::string_view key, double fallback) {
        const Json* j = find(parent, key);
        if (!j)
            return fallback;
        if (!j->is_number() || !std::isfinite(j->get<double>())) {
            fail(&parent, key, "\"" + std::string(key) + "\" is " + j->dump() + ", not a number");
            return fallback;
        }
        return j->get<double>();
    }

    std::map<std::string, std::string> stringMap(const Json& object, const std::string& what) {
        std::map<std::string, std::string> out;
        for (const auto& [key, value] : object.items()) {
            if (!value.is_string()) {
                fail(&object, key, what + "." + key + " is " + value.dump() + ", not a string");
                return out;
            }
            out[key] = value.get<std::string>();
        }
        return out;
    }

    // Records the first refusal, at key `key` of `object` (at the object itself when the key is not found).
    Diagnostic fail(const Json* object, std::string_view key, std::string message) {
        if (ok_) {
            ok_ = false;
            error_ = makeError(locate(object, key), std::move(message));
        }
        return error_;
    }

    SourceLocation locate(const Json* object, std::string_view key) const {
        size_t ordinal = 0;
        if (!object || !json_support::detail::objectOrdinal(root_, object, ordinal))
            return json_support::locationOf(text_, firstToken(), fileName_);
        const size_t open = nthObject(ordinal);
        if (open == std::string_view::npos)
            return json_support::locationOf(text_, firstToken(), fileName_);
        const size_t at = key.empty() ? std::string_view::npos : keyIn(open, key);
        return json_support::locationOf(text_, at == std::string_view::npos ? open : at, fileName_);
    }

    size_t firstToken() const {
        const size_t i = text_.find_first_not_of(" \t\r\n");
        return i == std::string_view::npos ? 0 : i;
    }

    // Offset of the n-th '{' outside strings (objects come in text order, as locateObject relies on).
    size_t nthObject(size_t n) const {
        return json_support::findOutsideStrings(text_, [&n](char c) { return c == '{' && n-- == 0; });
    }

    // Offset of the opening quote of member `key` of the object whose '{' is at `open`; npos when the key
    // is not written plainly (escapes) or not there.
    size_t keyIn(size_t open, std::string_view key) const {
        size_t depth = 0;
        for (size_t i = open; i < text_.size(); ++i) {
            const char c = text_[i];
            if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return std::string_view::npos;
            } else if (c == '"') {
                const size_t start = i;
                for (++i; i < text_.size() && text_[i] != '"'; ++i)
                    if (text_[i] == '\\')
                        ++i;
                if (depth != 1)
                    continue;
                const std::string_view name = text_.substr(start + 1, i - start - 1);
                const size_t next = text_.find_first_not_of(" \t\r\n", i + 1);
                if (name == key && next != std::string_view::npos && text_[next] == ':')
                    return start;
            }
        }
        return std::string_view::npos;
    }

    std::string_view text_;
    const Json& root_;
    const std::string& fileName_;
    bool ok_ = true;
    Diagnostic error_;
};

} // namespace

Expected<SessionFile> parseSession(std::string_view text, const std::string& fileName) {
    Expected<Json> root = json_support::parseLocated(text, fileName);
    if (!root)
        return root.error();
    return SessionReader(text, *root, fileName).read();
}

Expected<SessionFile> readSession(const std::string& path) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec)
        return makeError({path, 0, 0}, "cannot open session: " + ec.message());
    if (size > kMaxSessionBytes)
        return makeError({path, 0, 0},
                         "session is " + std::to_string(size >> 20) + " MiB; sessions are at most 64 MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError({path, 0, 0}, "cannot open session for reading");
    std::string text(static_cast<size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
    return parseSession(text, path);
}

std::string writeSession(const SessionFile& session) {
    Json j = Json::object();
    j["format"] = kFormat;
    j["version"] = kSessionVersion;
    j["graph"] = {{"path", session.graphPath}, {"index", session.graphIndex}};
    j["options"] = {{"ruleset", session.ruleset},
                    {"strategy", session.strategy},
                    {"memory_budget", session.memoryBudget},
                    {"solver", session.solver}};
    j["policies"] = Json::object();
    for (const auto& [node, policy] : session.policies)
        j["policies"][node] = policy;
    if (const std::optional<SessionSharding>& s = session.sharding) {
        Json pins = Json::object();
        for (const auto& [node, placement] : s->pins)
            pins[node] = placement;
        j["sharding"] = {{"mesh", {{"shape", s->shape}, {"names", s->names}, {"topology", s->topology}}},
                         {"pins", pins},
                         {"solved", s->solved}};
    }
    j["view"] = Json::object();
    for (const auto& [key, value] : session.view)
        j["view"][key] = value;
    // Invalid UTF-8 in a node name is written as U+FFFD rather than refused: the session must still save.
    return j.dump(4, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace jointscope
