// `tlc tune` end to end on the CPU, and `tlc build --tuned`: the structure
// of what they print and store, never the times measured.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/driver/run_tlc.h"

#ifdef TLC_TEST_HAVE_CPU

namespace fs = std::filesystem;
using driver_test::Result;
using driver_test::tlc;

namespace {

struct Workspace {
  fs::path dir, db, cache;
  Workspace() {
    dir = fs::temp_directory_path() / ("tlc_tune_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    db = dir / "db";
    cache = dir / "cache";
    write("helpers.tl", "macro twice(x):\n    return x * 2\n");
    // block=0 fails in the front end (a zero-sized grid), block=128 fails the condition.
    write("scale.tl",
          "from helpers import twice\n"
          "@T.tune(block=[0, 32, 64, 128], where=[block <= 64])\n"
          "def scale[M, block=32](A: Tensor[(M,), float32], B: Tensor[(M,), float32]):\n"
          "    with T.Kernel(T.ceildiv(M, block)) as bx:\n"
          "        for i in T.Parallel(block):\n"
          "            if bx * block + i < M:\n"
          "                B[bx * block + i] = twice(A[bx * block + i]) + 1.0\n"
          "def plain[M](A: Tensor[(M,), float32]):\n"
          "    with T.Kernel(1) as bx:\n"
          "        A[0] = 1.0\n");
  }
  ~Workspace() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  std::string file(const std::string& name) const { return (dir / name).string(); }
  std::string env() const { return "TLC_PROGRESS=1 TLC_CACHE_DIR=" + cache.string(); }
  Result tune(const std::string& args) const {
    return tlc("tune " + file("scale.tl") + " --target=cpu --db " + db.string() + " --min-time 0.01 " + args, env());
  }
  Result build(const std::string& args) const {
    return tlc("build --tuned " + file("scale.tl") + " --target=cpu --db " + db.string() + " -o " + file("out.so") +
                   " " + args,
               env());
  }
};

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("tlc tune on the CPU measures, prunes, checks and stores; build --tuned uses the result") {
  Workspace w;
  Result r = w.tune("--dim M=1000 -j 2");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("tune: compiled 4/4, measured 4/4") != std::string::npos);
  CHECK(r.out.find("4 candidates: 2 measured, 1 pruned, 1 failed, 0 rejected") != std::string::npos);
  CHECK(r.out.find("`scale` on cpu") != std::string::npos);
  CHECK(r.out.find("[M<=1024]") != std::string::npos);
  bool best32 = r.out.find("best: block=32 ") != std::string::npos;
  bool best64 = r.out.find("best: block=64 ") != std::string::npos;
  CHECK(best32 != best64);
  std::string best = best32 ? "32" : "64";

  Result show = tlc("tune --show -v --db " + w.db.string());
  INFO(show.out);
  CHECK(show.code == 0);
  CHECK(show.out.find("where: `block <= 64` is false") != std::string::npos);
  CHECK(show.out.find("checked against the interpreter") != std::string::npos);
  CHECK(show.out.find("failed") != std::string::npos);

  // The same inputs again: the record answers.
  Result again = w.tune("--dim M=1000");
  CHECK(again.code == 0);
  CHECK(again.out.find("already tuned") != std::string::npos);

  // The build takes the tuned block (in the module's metadata bindings).
  Result b = w.build("");
  INFO(b.out);
  REQUIRE(b.code == 0);
  CHECK(b.out.find("`scale`: tuned block=" + best) != std::string::npos);
  CHECK(readAll(w.file("out.so")).find("\"name\":\"block\",\"value\":\"" + best + "\"") != std::string::npos);
  // --dim picks the bucket: another one has no record.
  Result other = w.build("--dim M=100000");
  CHECK(other.code == 1);
  CHECK(other.out.find("no tuning results for `scale`") != std::string::npos);
  CHECK(other.out.find("results exist for other devices or shapes") != std::string::npos);
  CHECK(other.out.find("tlc tune " + w.file("scale.tl") + " --target=cpu --dim M=100000") != std::string::npos);
  // A -D makes other inputs.
  CHECK(w.build("-D M=64").code == 1);

  // Editing an imported module makes the record inapplicable.
  w.write("helpers.tl", "macro twice(x):\n    return x + x\n");
  Result stale = w.build("");
  CHECK(stale.code == 1);
  CHECK(stale.out.find("no tuning results for `scale`") != std::string::npos);
}

TEST_CASE("a corrupt record is rebuilt by the next tune") {
  Workspace w;
  REQUIRE(w.tune("--dim M=300 --space block=32").code == 0);
  for (auto& e : fs::recursive_directory_iterator(w.db))
    if (e.path().extension() == ".bin") std::ofstream(e.path(), std::ios::app) << "garbage";
  Result show = tlc("tune --show --db " + w.db.string());
  CHECK(show.out.find("no tuning results") != std::string::npos);
  CHECK(w.build("").code == 1);
  Result r = w.tune("--dim M=300 --space block=32");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("already tuned") == std::string::npos);
  CHECK(w.build("").code == 0);
}

TEST_CASE("tlc tune reports bad spaces and missing sizes") {
  Workspace w;
  struct Mistake {
    std::string args;
    int code;
    const char* says;
  };
  for (const Mistake& m : {Mistake{"--dim M=100 --space blok=16", 2, "did you mean `block`"},
                           Mistake{"--dim M=100 -D block=32", 2, "both tuned and bound"},
                           Mistake{"--dim M=100 --kernel plain", 2, "has no tuning space"},
                           Mistake{"", 1, "[missing-dim-value]"},
                           Mistake{"--dim M=100 --where 'block <'", 1, "<--where 1>"}}) {
    Result r = w.tune(m.args);
    INFO(m.args, "\n", r.out);
    CHECK(r.code == m.code);
    CHECK(r.out.find(m.says) != std::string::npos);
  }
  Result interp = tlc("tune " + w.file("scale.tl") + " --target=interp --dim M=100");
  CHECK(interp.code == 2);
  CHECK(tlc("build " + w.file("scale.tl") + " -o " + w.file("x.so") + " --dim M=4").code == 2);
}

#endif
