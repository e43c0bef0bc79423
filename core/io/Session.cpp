#include "io/Session.h"

#include "io/JsonSupport.h"
#include "io/ReadFile.h"

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
    SessionReader(std::string_view text, const Json& root, const std::string& fileName,
                  const SessionLimits& limits)
        : text_(text), root_(root), fileName_(fileName), limits_(limits) {}

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
            graphPathAt_ = locate(graph, "path");
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
        if (const Json* policies = object(root_, "policies");
            policies && within(root_, "policies", *policies, limits_.policies, "policies"))
            s.policies = stringMap(*policies, "policies");
        if (const Json* sharding = object(root_, "sharding"))
            s.sharding = readSharding(*sharding);
        if (const Json* view = object(root_, "view");
            view && within(root_, "view", *view, limits_.viewEntries, "view settings"))
            for (const auto& [key, value] : view->items())
                if (value.is_string() && key.size() <= limits_.stringBytes &&
                    value.get_ref<const std::string&>().size() <= limits_.stringBytes)
                    s.view[key] = value.get<std::string>(); // a setting too long for any window is dropped
        if (!ok_)
            return error_;
        return s;
    }

    // Where graph.path is written (after read()), for refusals about the file it names.
    const SourceLocation& graphPathAt() const { return graphPathAt_; }

private:
    SessionSharding readSharding(const Json& sharding) {
        SessionSharding s;
        if (const Json* mesh = object(sharding, "mesh")) {
            if (const Json* shape = array(*mesh, "shape");
                shape && within(*mesh, "shape", *shape, limits_.meshDims, "mesh dimensions"))
                for (const Json& d : *shape) {
                    if (!d.is_number_integer() || !fitsInt64(d)) {
                        fail(mesh, "shape", "sharding.mesh.shape holds " + d.dump() + ", not a size");
                        return s;
                    }
                    s.shape.push_back(d.get<int64_t>());
                }
            if (const Json* names = array(*mesh, "names");
                names && within(*mesh, "names", *names, limits_.meshDims, "mesh dimension names"))
                for (const Json& n : *names) {
                    if (!n.is_string()) {
                        fail(mesh, "names", "sharding.mesh.names holds " + n.dump() + ", not a name");
                        return s;
                    }
                    if (!shortEnough(*mesh, "names", n.get_ref<const std::string&>(),
                                     "a mesh dimension name"))
                        return s;
                    s.names.push_back(n.get<std::string>());
                }
            s.topology = string(*mesh, "topology", s.topology);
        }
        if (const Json* pins = object(sharding, "pins");
            pins && within(sharding, "pins", *pins, limits_.shardingPins, "sharding pins"))
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

    // Whether `collection` (member `key` of `parent`) holds at most `limit` entries; a refusal otherwise.
    bool within(const Json& parent, std::string_view key, const Json& collection, size_t limit,
                const char* what) {
        if (collection.size() <= limit)
            return true;
        fail(&parent, key,
             "\"" + std::string(key) + "\" holds " + std::to_string(collection.size()) + " " + what +
                 "; a session holds at most " + std::to_string(limit));
        return false;
    }

    bool shortEnough(const Json& parent, std::string_view key, const std::string& value,
                     const std::string& what) {
        if (value.size() <= limits_.stringBytes)
            return true;
        fail(&parent, key,
             what + " is " + std::to_string(value.size()) + " bytes long; a session's strings are at most " +
                 std::to_string(limits_.stringBytes));
        return false;
    }

    std::string string(const Json& parent, std::string_view key, std::string fallback) {
        const Json* j = find(parent, key);
        if (!j)
            return fallback;
        if (!j->is_string()) {
            fail(&parent, key, "\"" + std::string(key) + "\" is " + j->dump() + ", not a string");
            return fallback;
        }
        if (!shortEnough(parent, key, j->get_ref<const std::string&>(), "\"" + std::string(key) + "\""))
            return fallback;
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
            if (!shortEnough(object, key, key, "a node name in " + what) ||
                !shortEnough(object, key, value.get_ref<const std::string&>(), what + "." + key))
                return out;
            out.emplace_hint(out.end(), key, value.get<std::string>()); // items() come sorted
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
    const SessionLimits& limits_;
    bool ok_ = true;
    Diagnostic error_;
    SourceLocation graphPathAt_;
};

} // namespace

namespace {

Expected<SessionFile> parseLocated(std::string_view text, const std::string& fileName,
                                   const SessionLimits& limits, SourceLocation* graphPathAt) {
    Expected<Json> root = json_support::parseLocated(text, fileName);
    if (!root)
        return root.error();
    SessionReader reader(text, *root, fileName, limits);
    Expected<SessionFile> session = reader.read();
    if (graphPathAt)
        *graphPathAt = reader.graphPathAt();
    return session;
}

} // namespace

Expected<SessionFile> parseSession(std::string_view text, const std::string& fileName,
                                   const SessionLimits& limits) {
    return parseLocated(text, fileName, limits, nullptr);
}

Expected<SessionFile> readSession(const std::string& path, const SessionLimits& limits) {
    Expected<std::string> text = readDocumentFile(path, "session", kMaxSessionBytes);
    if (!text)
        return text.error();
    SourceLocation graphPathAt;
    Expected<SessionFile> session = parseLocated(*text, path, limits, &graphPathAt);
    if (!session)
        return session;
    const std::string graph = sessionGraphFile(*session, path);
    if (isSessionFile(graph)) {
        std::error_code ec;
        const bool self = std::filesystem::equivalent(graph, path, ec);
        return makeError(
            graphPathAt,
            "graph.path names " +
                (self ? std::string("this session itself") : "the session '" + graph + "'") +
                ", not a graph file: a session opens the graph (FX text, JSON, TORCH_TRACE log) it "
                "was saved on");
    }
    return session;
}

std::string sessionGraphFile(const SessionFile& session, const std::string& sessionPath) {
    const std::filesystem::path graph(session.graphPath);
    if (graph.is_absolute())
        return graph.string();
    return (std::filesystem::path(sessionPath).parent_path() / graph).lexically_normal().string();
}

bool isSessionFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    // The writer puts "format" first; a hand-made session may put it anywhere in a small object, so the head
    // of the file is searched rather than parsed.
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    const size_t start = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    return start != std::string::npos && head[start] == '{' &&
           head.find("\"" + std::string(kFormat) + "\"") != std::string::npos;
}

std::string UnknownNodes::summary(std::string_view what) const {
    std::string out = std::to_string(count) + " " + std::string(what) + (count == 1 ? " names" : " name") +
                      " no node of the graph";
    for (size_t i = 0; i < examples.size(); ++i)
        out += (i ? ", '" : ": '") + examples[i] + "'";
    if (count > examples.size())
        out += ", …";
    return out + "; ignored";
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
