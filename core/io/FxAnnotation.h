// Type annotations of FX text: "f32[8, 16][16, 1]cuda:0", "i64[s0, 8]", "Sym(4*s0 + 1)".
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::fx {

struct AnnotationError {
    uint32_t column = 0; // 0-based offset into the annotation text
    std::string message;
};

// Fills node.outputKind / outputs / symValue from an annotation. Annotations that are not tensor or symbol
// types (torch.Tensor, List[int]) carry nothing jointscope models and are accepted unchanged; a malformed
// tensor annotation ("f32[8, 16") is an error.
bool parseAnnotation(std::string_view text, Node& node, AnnotationError& error);

// The annotation FX would print for node, without quotes; empty when the node carries no metadata.
std::string formatAnnotation(const Node& node);

// Output node meta.extra key for the per-element comments of a multi-line return, such as
// "PlainAOTOutput(idx=0)" or "GradAOTOutput(grad_of=PlainAOTInput(idx=1))"; the value is a JSON array of
// strings.
inline constexpr std::string_view kOutputDescriptorsKey = "output_descriptors";
// Node meta.extra key for node.meta["custom"] as torch's node summary prints it ("# Annotation: {'call_id':
// 3} File: ..."): the dict's Python text, e.g. "{'call_id': 3}".
inline constexpr std::string_view kCustomAnnotationKey = "annotation";
std::string toJsonStringArray(const std::vector<std::string>& items);
// Inverse of toJsonStringArray; false when text is not a flat JSON array of strings.
bool fromJsonStringArray(std::string_view text, std::vector<std::string>& items);

} // namespace jointscope::fx
