// ghostbench demo: four ways to dispatch a tiny strategy chosen at run time.
//
// Each mechanism calls `apply` on the same runtime-selected strategy in a
// tight loop and prints one line "<mechanism> <ns> ns/call". The strategy is
// picked from argc, so the compiler cannot resolve the dispatch statically.
//
// Two switches give `ghostbench demo` a story to tell with one compiler:
//   -DFINAL_DISPATCH  a real change to one mechanism: the virtual loop tests
//                     the strategy's dynamic type once, then calls the `final`
//                     class directly, which the compiler inlines.
//   -DCOLD_PATH=N     N bytes (a multiple of 16) of cold code that never runs,
//                     in .text.unlikely, which the linker puts before all other
//                     code. No hot instruction changes; every hot loop moves by
//                     N bytes, so only where the code sits differs.
//
// Timing: the thread's CPU time, so a run that shares its core with other
// processes is not charged for their time slices; per mechanism, the fastest
// of 20 chunks (a fraction of a millisecond each), so an interrupt or a
// preempted virtual CPU slows some chunks rather than the result, while
// placement slows every chunk alike.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <variant>

using u64 = unsigned long long;

// --- virtual -----------------------------------------------------------------
struct Base {
    virtual ~Base() = default;
    virtual u64 apply(u64 x) const = 0;
};
struct AddV final : Base { u64 apply(u64 x) const override { return x + 0x9e3779b97f4a7c15ULL; } };
struct MulV final : Base { u64 apply(u64 x) const override { return x * 0xff51afd7ed558ccdULL; } };
struct XorV final : Base { u64 apply(u64 x) const override { return x ^ (x >> 29); } };

// --- function pointer --------------------------------------------------------
__attribute__((noinline)) u64 add_f(u64 x) { return x + 0x9e3779b97f4a7c15ULL; }
__attribute__((noinline)) u64 mul_f(u64 x) { return x * 0xff51afd7ed558ccdULL; }
__attribute__((noinline)) u64 xor_f(u64 x) { return x ^ (x >> 29); }

// --- std::variant ------------------------------------------------------------
// The empty asm keeps each alternative a step of its own: an inlined visit
// stays a predicted branch to the one alternative, as it would be for bigger
// steps, instead of being merged into branch-free code that computes all three.
struct Add { u64 apply(u64 x) const { asm("" : "+r"(x)); return x + 0x9e3779b97f4a7c15ULL; } };
struct Mul { u64 apply(u64 x) const { asm("" : "+r"(x)); return x * 0xff51afd7ed558ccdULL; } };
struct Xor { u64 apply(u64 x) const { asm("" : "+r"(x)); return x ^ (x >> 29); } };
using Strategy = std::variant<Add, Mul, Xor>;

// --- CRTP --------------------------------------------------------------------
template <class D> struct Crtp {
    u64 apply(u64 x) const { return static_cast<const D*>(this)->step(x); }
};
struct AddC : Crtp<AddC> { u64 step(u64 x) const { return x + 0x9e3779b97f4a7c15ULL; } };
struct MulC : Crtp<MulC> { u64 step(u64 x) const { return x * 0xff51afd7ed558ccdULL; } };
struct XorC : Crtp<XorC> { u64 step(u64 x) const { return x ^ (x >> 29); } };

#ifdef COLD_PATH
#define DISPATCH_STR2(x) #x
#define DISPATCH_STR(x) DISPATCH_STR2(x)
// The cold path: an error exit that no run takes (ud2 traps), padded to
// COLD_PATH bytes. Written in assembly so that its size is exactly N with
// every compiler, and so is the distance it moves the hot code.
asm(".pushsection .text.unlikely.dispatch_cold_path,\"ax\",@progbits\n"
    "\t.p2align 4\n"
    "dispatch_cold_path:\n"
    "\tud2\n"
    "\t.skip " DISPATCH_STR(COLD_PATH) " - 2, 0xcc\n"
    "\t.popsection\n");
#endif

static volatile u64 sink;

static double cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

template <class F> static void measure(const char* name, long n, F&& body) {
    const int chunks = 20;
    long per = n / chunks > 0 ? n / chunks : 1;
    double best = 1e300;
    for (int c = 0; c < chunks; c++) {
        double start = cpu_ns();
        u64 x = body(per);
        double stop = cpu_ns();
        sink = x;
        if (stop - start < best) best = stop - start;
    }
    std::printf("%s %.4f ns/call\n", name, best / double(per));
}

#ifdef FINAL_DISPATCH
// A direct call to a final class's apply: the compiler inlines it.
template <class T> static u64 loop_final(const T* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) {
        x = s->T::apply(x) + u64(i);
        asm volatile("" : "+r"(x));  // keep one apply per iteration
    }
    return x;
}
#endif

// Each loop is its own function so that its placement is its own.
__attribute__((noinline)) u64 loop_virtual(const Base* s, long n) {
#ifdef FINAL_DISPATCH
    // Guarded devirtualisation: one type test per call of the loop, not per apply.
    if (auto* a = dynamic_cast<const AddV*>(s)) return loop_final(a, n);
    if (auto* m = dynamic_cast<const MulV*>(s)) return loop_final(m, n);
    if (auto* x = dynamic_cast<const XorV*>(s)) return loop_final(x, n);
#endif
    u64 x = 1;
    for (long i = 0; i < n; i++) x = s->apply(x) + u64(i);
    return x;
}
__attribute__((noinline)) u64 loop_fnptr(u64 (*f)(u64), long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) x = f(x) + u64(i);
    return x;
}
__attribute__((noinline)) u64 loop_variant(const Strategy* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) {
        x = std::visit([x](const auto& st) { return st.apply(x); }, *s) + u64(i);
        asm volatile("" : "+r"(x));  // keep the dispatch inside the loop
    }
    return x;
}
template <class D> __attribute__((noinline)) u64 loop_crtp(const Crtp<D>* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) {
        x = s->apply(x) + u64(i);
        asm volatile("" : "+r"(x));
    }
    return x;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 20000000;
    // Runtime-selected: one argument → Add, two → Mul, none → Xor. Add's
    // one-cycle step leaves the dispatch itself as the cost being measured.
    int which = (argc + 1) % 3;
    static const AddV av; static const MulV mv; static const XorV xv;
    const Base* v = which == 0 ? static_cast<const Base*>(&av) : which == 1 ? static_cast<const Base*>(&mv) : &xv;
    u64 (*f)(u64) = which == 0 ? add_f : which == 1 ? mul_f : xor_f;
    Strategy s = which == 0 ? Strategy(Add{}) : which == 1 ? Strategy(Mul{}) : Strategy(Xor{});
    static const AddC ac; static const MulC mc; static const XorC xc;

    measure("virtual", n, [&](long k) { return loop_virtual(v, k); });
    measure("fnptr", n, [&](long k) { return loop_fnptr(f, k); });
    measure("variant", n, [&](long k) { return loop_variant(&s, k); });
    measure("crtp", n, [&](long k) {
        switch (which) {
            case 0: return loop_crtp(&ac, k);
            case 1: return loop_crtp(&mc, k);
            default: return loop_crtp(&xc, k);
        }
    });
    return 0;
}
