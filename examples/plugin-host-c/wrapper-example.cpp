// wrapper-example: the C++ wrapper as a plugin would use it.
//
//   wrapper-example SOCKET|- PROJECT_ID [TIMEOUT_MS]
//
// One direct plc::Client check, then a plc::Monitor whose state is read the way an audio
// callback would. Exit status: 0 valid, 1 not valid, 2 unknown (agent down or no answer).
#include "plc.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

const char *stateName(plc::State state) {
  switch (state) {
    case plc::State::valid: return "valid";
    case plc::State::invalid: return "invalid";
    case plc::State::unknown: break;
  }
  return "unknown";
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s SOCKET|- PROJECT_ID [TIMEOUT_MS]\n", argv[0]);
    return 64;
  }
  const char *socketPath = std::strcmp(argv[1], "-") == 0 ? nullptr : argv[1];
  const std::chrono::milliseconds timeout(argc == 4 ? std::atoi(argv[3]) : PLC_DEFAULT_TIMEOUT_MS);

  {
    plc::Client client(socketPath);
    const plc::CheckResult result = client.check(argv[2], timeout);
    if (result.license) {
      std::printf("client state=%s reason=%s code_hint=%s\n", stateName(result.state()),
                  result.license->reasonText.empty() ? "-" : result.license->reasonText.c_str(),
                  result.license->codeHint.empty() ? "-" : result.license->codeHint.c_str());
    } else {
      std::printf("client state=unknown status=%d (%s)\n", static_cast<int>(result.status), plc::describe(result.status));
    }
  }

  plc::Monitor monitor(argv[2], std::chrono::milliseconds(50), socketPath, timeout);
  int changes = 0;
  monitor.onChange([&changes](const plc::CheckResult &) { ++changes; });
  monitor.start();

  // Stand-in for processBlock: poll the atomic state, bounded to about 2 s.
  plc::State seen = plc::State::unknown;
  for (int block = 0; block < 200 && seen == plc::State::unknown; ++block) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = monitor.state();
  }
  monitor.stop();
  const plc::CheckResult last = monitor.last();
  const char *reason = plc::name(monitor.reason());
  std::printf("monitor state=%s reason=%s changes=%d status=%d\n", stateName(seen), reason[0] ? reason : "-", changes,
              static_cast<int>(last.status));
  return seen == plc::State::valid ? 0 : seen == plc::State::invalid ? 1 : 2;
}
