#include "expression.hpp"

#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

namespace ferro::einsum {
namespace {

[[noreturn]] void fail(const std::string& why) { throw plugin::Error(FERRO_INVALID_ARGUMENT, "einsum: " + why); }

// One label or `...` of a term, with where it was written (for messages).
struct Token {
    int64_t key = 0;  // code point (subscripts) or integer label (sublists)
    bool ellipsis = false;
    int64_t position = 0;
};
struct Terms {
    std::vector<std::vector<Token>> inputs;
    std::optional<std::vector<Token>> output;  // absent: implicit output
};
// How a spelling names a label and a position in messages.
struct Spelling {
    std::function<std::string(int64_t key)> name;
    std::function<std::string(int64_t position)> where;
};

std::string utf8(char32_t c) {
    std::string s;
    if (c < 0x80) {
        s += static_cast<char>(c);
    } else if (c < 0x800) {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        s += static_cast<char>(0xE0 | (c >> 12));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        s += static_cast<char>(0xF0 | (c >> 18));
        s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
}

// An ASCII character as messages quote it ('1', '&', or U+000D for a control character).
std::string ascii_name(char32_t c) {
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    char name[8];
    std::snprintf(name, sizeof name, "U+%04X", static_cast<unsigned>(c));
    return name;
}

// Code points of UTF-8 text; invalid or overlong sequences are an error naming the byte.
std::vector<char32_t> decode(std::string_view text) {
    std::vector<char32_t> out;
    for (size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
        if (extra < 0 || i + static_cast<size_t>(extra) >= text.size()) {
            fail("subscripts are not valid UTF-8 (byte " + std::to_string(i) + ")");
        }
        char32_t c = extra == 0 ? b : b & (0x3F >> extra);
        for (int k = 1; k <= extra; ++k) {
            const auto cont = static_cast<unsigned char>(text[i + k]);
            if ((cont >> 6) != 2) fail("subscripts are not valid UTF-8 (byte " + std::to_string(i + k) + ")");
            c = (c << 6) | (cont & 0x3F);
        }
        static constexpr char32_t smallest[] = {0, 0x80, 0x800, 0x10000};
        if (c < smallest[extra] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            fail("subscripts are not valid UTF-8 (byte " + std::to_string(i) + ")");
        }
        out.push_back(c);
        i += static_cast<size_t>(extra) + 1;
    }
    return out;
}

Expression build(const Terms& t, std::span<const int> ranks, const Spelling& spell) {
    if (t.inputs.size() != ranks.size()) {
        fail("the subscripts name " + std::to_string(t.inputs.size()) + " operand" + (t.inputs.size() == 1 ? "" : "s") + " but " +
             std::to_string(ranks.size()) + " " + (ranks.size() == 1 ? "was" : "were") + " given");
    }
    // Axes each operand's `...` stands for; they align from the right, as in broadcasting.
    std::vector<int> ellipsis_axes(ranks.size(), 0);
    int ellipsis_rank = 0;
    for (size_t k = 0; k < t.inputs.size(); ++k) {
        const auto& term = t.inputs[k];
        const int named = static_cast<int>(std::count_if(term.begin(), term.end(), [](const Token& x) { return !x.ellipsis; }));
        const bool has_ellipsis = named != static_cast<int>(term.size());
        if (named > ranks[k] || (!has_ellipsis && named != ranks[k])) {
            fail("operand " + std::to_string(k) + " has " + std::to_string(ranks[k]) + " dimension" + (ranks[k] == 1 ? "" : "s") +
                 " but its subscripts name " + std::to_string(named) +
                 (has_ellipsis || named > ranks[k] ? "" : " (use ... for the others)"));
        }
        if (has_ellipsis) ellipsis_axes[k] = ranks[k] - named;
        ellipsis_rank = std::max(ellipsis_rank, ellipsis_axes[k]);
    }
    Expression e;
    for (int j = 0; j < ellipsis_rank; ++j) {
        e.names.push_back(std::string("... axis ") + std::to_string(j));
        e.keys.push_back(-1 - j);
    }
    std::map<int64_t, int> id_of;
    std::map<int64_t, int> uses;
    for (size_t k = 0; k < t.inputs.size(); ++k) {
        std::vector<int>& axes = e.inputs.emplace_back();
        for (const Token& x : t.inputs[k]) {
            if (x.ellipsis) {
                for (int j = ellipsis_rank - ellipsis_axes[k]; j < ellipsis_rank; ++j) axes.push_back(j);
                continue;
            }
            auto [it, fresh] = id_of.emplace(x.key, e.n_labels());
            if (fresh) {
                e.names.push_back(spell.name(x.key));
                e.keys.push_back(x.key);
            }
            ++uses[x.key];
            axes.push_back(it->second);
        }
    }
    if (!t.output) {  // implicit: `...` axes, then the labels used once, in key order
        for (int j = 0; j < ellipsis_rank; ++j) e.output.push_back(j);
        for (const auto& [key, count] : uses) {
            if (count == 1) e.output.push_back(id_of.at(key));
        }
        return e;
    }
    std::vector<bool> taken(static_cast<size_t>(e.n_labels()), false);
    for (const Token& x : *t.output) {
        if (x.ellipsis) {  // the parsers allow one per term
            for (int j = 0; j < ellipsis_rank; ++j) e.output.push_back(j);
            continue;
        }
        const auto it = id_of.find(x.key);
        if (it == id_of.end()) {
            fail("label " + spell.name(x.key) + " of the output does not appear in any operand " + spell.where(x.position));
        }
        if (taken[static_cast<size_t>(it->second)]) {
            fail("label " + spell.name(x.key) + " appears twice in the output " + spell.where(x.position));
        }
        taken[static_cast<size_t>(it->second)] = true;
        e.output.push_back(it->second);
    }
    return e;  // `...` axes left out of an explicit output are summed, as PyTorch does
}

}  // namespace

Expression parse_subscripts(std::string_view subscripts, std::span<const int> ranks) {
    const std::vector<char32_t> text = decode(subscripts);
    std::string quoted = "\"";
    quoted.append(subscripts).append("\"");
    const Spelling spell{[](int64_t key) { return std::string("'") + utf8(static_cast<char32_t>(key)) + "'"; },
                         [&](int64_t p) { return std::string("(character ") + std::to_string(p) + " of " + quoted + ")"; }};
    Terms t;
    std::vector<Token>* term = &t.inputs.emplace_back();
    for (size_t i = 0; i < text.size(); ++i) {
        const char32_t c = text[i];
        const auto at = static_cast<int64_t>(i);
        if (c == U' ' || c == U'\t' || c == U'\n') continue;
        if (c == U',') {
            if (t.output) fail("',' after '->' " + spell.where(at) + ": the output is a single term");
            term = &t.inputs.emplace_back();
        } else if (c == U'-') {
            if (i + 1 >= text.size() || text[i + 1] != U'>') fail("'-' must start '->' " + spell.where(at));
            if (t.output) fail("a second '->' " + spell.where(at));
            term = &t.output.emplace();
            ++i;
        } else if (c == U'>') {
            fail("'>' without '-' " + spell.where(at));
        } else if (c == U'.') {
            if (i + 2 >= text.size() || text[i + 1] != U'.' || text[i + 2] != U'.') {
                fail("'.' must be part of '...' " + spell.where(at));
            }
            if (std::any_of(term->begin(), term->end(), [](const Token& x) { return x.ellipsis; })) {
                fail(std::string("a second '...' in ") + (t.output ? "the output " : "one term ") + spell.where(at));
            }
            term->push_back({0, true, at});
            i += 2;
        } else if (c < 0x80 && !((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z'))) {
            // numpy refuses these too; taken as labels, a digit would silently reorder an implicit output.
            fail(ascii_name(c) + " is not a label " + spell.where(at) +
                 ": labels are ASCII letters or characters beyond ASCII (Greek, CJK, ...)");
        } else {
            term->push_back({static_cast<int64_t>(c), false, at});
        }
    }
    return build(t, ranks, spell);
}

Expression parse_sublists(std::span<const int64_t> sublists, std::span<const int> ranks) {
    const Spelling spell{[](int64_t key) { return std::to_string(key); },
                         [](int64_t p) { return std::string("(sublists entry ") + std::to_string(p) + ")"; }};
    Terms t;
    std::vector<Token>* term = &t.inputs.emplace_back();
    for (size_t i = 0; i < sublists.size(); ++i) {
        const int64_t v = sublists[i];
        const auto at = static_cast<int64_t>(i);
        if (v == kNextOperand) {
            if (t.output) fail("an operand separator after the output " + spell.where(at));
            term = &t.inputs.emplace_back();
        } else if (v == kOutput) {
            if (t.output) fail("a second output marker " + spell.where(at));
            term = &t.output.emplace();
        } else if (v == kEllipsis) {
            if (std::any_of(term->begin(), term->end(), [](const Token& x) { return x.ellipsis; })) {
                fail("a second ellipsis in one sublist " + spell.where(at));
            }
            term->push_back({0, true, at});
        } else if (v < 0) {
            fail(std::to_string(v) + " is not a label " + spell.where(at) +
                 ": labels are >= 0; -1 is ..., -2 separates operands, -3 starts the output");
        } else {
            term->push_back({v, false, at});
        }
    }
    return build(t, ranks, spell);
}

std::vector<int64_t> label_sizes(const Expression& e, std::span<const std::span<const int64_t>> shapes) {
    std::vector<int64_t> size(static_cast<size_t>(e.n_labels()), -1);
    struct Seen {
        size_t operand, axis;
    };
    std::vector<Seen> seen(size.size());
    for (size_t k = 0; k < e.inputs.size(); ++k) {
        for (size_t a = 0; a < e.inputs[k].size(); ++a) {
            const auto l = static_cast<size_t>(e.inputs[k][a]);
            const int64_t s = shapes[k][a];
            if (size[l] < 0 || (size[l] == 1 && s != 1 && seen[l].operand != k)) {
                size[l] = s;
                seen[l] = {k, a};
                continue;
            }
            const bool same_operand = seen[l].operand == k;
            if (s == size[l] || (s == 1 && !same_operand)) continue;
            fail("dimension mismatch for label " + e.names[l] + ": " + std::to_string(size[l]) + " (operand " +
                 std::to_string(seen[l].operand) + ", axis " + std::to_string(seen[l].axis) + ") vs " + std::to_string(s) +
                 " (operand " + std::to_string(k) + ", axis " + std::to_string(a) + ")" +
                 (same_operand ? ": a repeated label takes a diagonal, which needs equal sizes" : ""));
        }
    }
    for (int64_t& s : size) {
        if (s < 0) s = 1;  // `...` axes no operand has
    }
    return size;
}

std::vector<int64_t> to_sublists(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output) {
    std::vector<int64_t> out;
    for (size_t k = 0; k < inputs.size(); ++k) {
        if (k > 0) out.push_back(kNextOperand);
        out.insert(out.end(), inputs[k].begin(), inputs[k].end());
    }
    out.push_back(kOutput);
    out.insert(out.end(), output.begin(), output.end());
    return out;
}

std::vector<std::span<const int64_t>> shapes_of(std::span<const ferro_signature> sigs) {
    std::vector<std::span<const int64_t>> shapes;
    for (const auto& s : sigs) shapes.push_back(plugin::shape_of(s));
    return shapes;
}

}  // namespace ferro::einsum
