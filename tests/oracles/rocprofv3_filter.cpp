// The kernel selection rocprofv3's tool makes, with the C++ library it makes it with: each input
// line is a kernel name as the SDK reports it; `(\.kd)$` is removed with std::regex_replace, the
// rest demangled with abi::__cxa_demangle (kept as it is when it does not demangle), and the
// kernel is selected when std::regex_search (ECMAScript) finds argv[1] in that name and, when
// argv[2] is given and not empty, does not find argv[2]. Prints "1 NAME" or "0 NAME" per line.
// Written for krphase's tests from rocprofv3's documented behaviour; no SDK code.
#include <cxxabi.h>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>

static std::string demangled(const std::string& raw) {
    std::string bare = std::regex_replace(raw, std::regex{"(\\.kd)$"}, "");
    int status = 0;
    char* d = abi::__cxa_demangle(bare.c_str(), nullptr, nullptr, &status);
    std::string out = (status == 0 && d != nullptr && *d != '\0') ? std::string{d} : bare;
    std::free(d);
    return out;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: rocprofv3_filter INCLUDE [EXCLUDE] < names\n";
        return 2;
    }
    const std::regex include{argv[1]};
    const std::string exclude_src = argc > 2 ? argv[2] : "";
    const std::regex exclude{exclude_src.empty() ? std::string{"^$"} : exclude_src};
    std::string raw;
    while (std::getline(std::cin, raw)) {
        const std::string name = demangled(raw);
        const bool selected = std::regex_search(name, include) &&
                              (exclude_src.empty() || !std::regex_search(name, exclude));
        std::cout << (selected ? 1 : 0) << ' ' << name << '\n';
    }
    return 0;
}
