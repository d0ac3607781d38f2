// Every kernel choice a family declares (a parameter left out of the shape at its default: engine,
// tile, splits, ...) shows in the row's shape when set, each value its own shape, so that saved runs,
// baselines and compare tell the rows apart. Checked on every family's own descriptor, its GPU
// variants stood in by CPU ones of the same names (a CPU build has no GPU variants to make problems
// for), at the family's suite shapes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;

Params to_text(const ParamList& l) {
  Params out;
  for (auto& kv : l) out[kv.first] = kv.second.text();
  return out;
}

// The family with every variant a parameter names as a CPU variant of that name.
KernelFamily on_cpu(const KernelFamily& k) {
  KernelFamily c = k;
  c.variants.clear();
  std::set<std::string> names;
  for (auto& v : k.variants) names.insert(v.name);
  for (auto& s : k.params) names.insert(s.variants.begin(), s.variants.end());
  for (auto& n : names) c.variants.push_back(Variant{n, "cpu", nullptr});
  return c;
}

// The values a choice takes besides its default: its choices, or an integer's ends and 2.
std::vector<std::string> other_values(const ParamSpec& s) {
  std::vector<std::string> out;
  if (s.kind == ParamSpec::Kind::kChoice) {
    for (auto& c : s.choices)
      if (c != s.default_value) out.push_back(c);
  } else if (s.kind == ParamSpec::Kind::kInt) {
    for (std::int64_t v : {s.min, s.min + 1, s.max})
      if (std::to_string(v) != s.default_value) out.push_back(std::to_string(v));
  } else {
    out.push_back(s.default_value == "true" ? "false" : "true");
  }
  return out;
}

}  // namespace

TEST(KernelChoices, EverySetChoiceShowsInTheShapeEachValueItsOwn) {
  int checked = 0;
  for (const KernelFamily& fam : kernel_registry()) {
    const KernelFamily k = on_cpu(fam);
    std::vector<Params> bases;
    for (auto& c : k.suite) bases.push_back(to_text(c.params)), bases.push_back(to_text(c.quick));
    if (bases.empty()) continue;
    const std::string dtype = k.dtypes.size() > 1 ? "fp16" : to_string(k.dtypes.front());
    // The other choices' settings a value may need (gemm's tile needs an engine).
    std::vector<Params> others = {{}};
    for (auto& s : k.params)
      if (!s.in_shape_at_default)
        for (auto& v : other_values(s)) others.push_back({{s.name, v}});
    for (const ParamSpec& s : k.params) {
      if (s.in_shape_at_default) continue;
      const std::vector<std::string> variants = s.variants.empty() ? std::vector<std::string>{k.variants.front().name}
                                                                   : s.variants;
      for (const std::string& variant : variants) {
        std::set<std::string> shapes;
        for (const std::string& v : other_values(s)) {
          bool made = false;
          for (const Params& base : bases) {
            for (const Params& other : others) {
              if (other.count(s.name)) continue;
              Params p = base;
              for (auto& kv : other) p[kv.first] = kv.second;
              p[s.name] = v;
              Problem at_default, set;
              try {
                Params d = p;
                d.erase(s.name);
                at_default = make_problem(k, "cpu", variant, dtype, d);
                set = make_problem(k, "cpu", variant, dtype, p);
              } catch (const InvalidArgument&) {
                continue;  // a value that needs other settings, or another shape
              }
              const std::string shape = set.shape();
              EXPECT_NE(shape.find(s.name + "=" + v), std::string::npos) << shape;
              bool named = false;
              for (auto& kv : set.params_text()) named |= kv.first == s.name;
              EXPECT_TRUE(named) << k.name << "." << s.name << "=" << v << ": not in the shape " << shape;
              EXPECT_NE(shape, at_default.shape()) << k.name << "." << s.name << "=" << v;
              if (other.empty()) shapes.insert(shape);
              made = true;
              ++checked;
              break;
            }
            if (made) break;
          }
          EXPECT_TRUE(made) << k.name << "." << s.name << "=" << v << " (" << variant
                            << "): no suite shape takes it, with any other choice";
        }
        // Each value its own shape (where it needed no other setting).
        std::size_t alone = 0;
        for (const std::string& v : other_values(s)) {
          Params p = bases.front();
          p[s.name] = v;
          try {
            make_problem(k, "cpu", variant, dtype, p);
            ++alone;
          } catch (const InvalidArgument&) {
          }
        }
        EXPECT_GE(shapes.size(), alone) << k.name << "." << s.name;
      }
    }
  }
  EXPECT_GT(checked, 10);  // gemm's engine, tile, splits and attention's engine, splits at least
}

// A parameter left out of the shape at its default is a kernel choice at "auto" (or a setting added
// after rows were recorded, such as attention's scores), with a help line saying what it chooses.
TEST(KernelChoices, EveryChoiceOutOfTheShapeHasAHelpAndADefault) {
  int choices = 0;
  for (const KernelFamily& k : kernel_registry())
    for (const ParamSpec& s : k.params) {
      if (s.in_shape_at_default) continue;
      EXPECT_FALSE(s.help.empty()) << k.name << "." << s.name;
      EXPECT_FALSE(s.default_value.empty()) << k.name << "." << s.name;
      if (s.allows_auto || s.default_value == "auto") ++choices;
      if (s.allows_auto) EXPECT_EQ(s.default_value, "auto") << k.name << "." << s.name;
    }
  EXPECT_GE(choices, 5);  // gemm's engine, tile, splits; attention's engine, splits
}
