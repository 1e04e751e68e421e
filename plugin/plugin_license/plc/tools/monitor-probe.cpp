// monitor-probe: plc::Monitor and the agent on demand, as a host would drive them, printing JSON
// lines for the tests and the benchmark. The namespace, home, socket and executable come from the
// environment (PLUGIN_LICENSE_APP, PLUGIN_LICENSE_HOME, PLUGIN_LICENSE_SOCKET,
// PLUGIN_LICENSE_EXECUTABLE), as they reach a plugin.
//
//   monitor-probe load PROJECT_ID INSTANCES [OPTIONS]
//       Makes INSTANCES Monitors and reads each one's isLicensed() once, at once, as the first audio
//       block would: {"event":"load","state":...,"origin":...,"licensed_first_read":N,...,"ctor_us":[...]}.
//   monitor-probe follow PROJECT_ID INSTANCES DURATION_MS [OPTIONS]
//       The same Monitors, read every millisecond (the audio thread) until SIGTERM or DURATION_MS:
//       a line whenever what they read changes (t_us: since the first was made), then a summary
//       {"event":"done","samples":N,"unlicensed_after_licensed":M,...}.
//   monitor-probe policy
//       The unknown policy's arithmetic on published words (no agent, no waiting).
//   monitor-probe start EXECUTABLE APP
//       plc_start_agent with a marked descriptor open (no close-on-exec): {"status":...,"marker_fd":N,
//       "children":N} (children: processes of this one left after the call).
//   monitor-probe program EXECUTABLE [ARG...]
//       plc_start_program with its standard output a pipe (POSIX), read to its end (20 s at most), with
//       the marked descriptor open: {"status":...,"code":N,"os_error":"...","output":"...","marker_fd":N,
//       "children":N} (os_error: strerror of the start's errno, "" when none).
//   monitor-probe default-executable VENDOR NAME
//       plc_default_executable: {"status":...,"path":...}.
//
// OPTIONS: --policy keep|SECONDS (default: MonitorOptions' default), --no-start, --executable PATH,
// --vendor NAME, --key PUBLIC_KEY (repeatable: MonitorOptions::ticketKeys, as a plugin built with
// the vendor's keys; a plugin compiles them in, the probe takes them as flags for the tests).
#include "plc.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef _WIN32
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#endif

namespace {

volatile std::sig_atomic_t stopRequested = 0;
void onStop(int) { stopRequested = 1; }

const char *stateName(plc::State s) { return s == plc::State::valid ? "valid" : s == plc::State::invalid ? "invalid" : "unknown"; }
const char *originName(plc::Origin o) { return o == plc::Origin::agent ? "agent" : o == plc::Origin::ticket ? "ticket" : "none"; }

// Text as a JSON string (the tests parse every line).
std::string json(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool parseOptions(int argc, char **argv, int from, plc::MonitorOptions &o) {
  for (int i = from; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-start") {
      o.startAgent = false;
    } else if (a == "--policy" && i + 1 < argc) {
      const std::string v = argv[++i];
      o.unknown = v == "keep" ? plc::UnknownPolicy::keepPlaying() : plc::UnknownPolicy::silentAfter(std::chrono::seconds(std::atoi(v.c_str())));
    } else if (a == "--executable" && i + 1 < argc) {
      o.executable = argv[++i];
    } else if (a == "--vendor" && i + 1 < argc) {
      o.vendor = argv[++i];
    } else if (a == "--key" && i + 1 < argc) {
      o.ticketKeys.emplace_back(argv[++i]);
    } else {
      return false;
    }
  }
  return true;
}

// t_us: microseconds since the first Monitor was made (-1: not given).
std::string stateLine(const plc::Monitor &m, long long tUs = -1) {
  const plc::CheckResult last = m.last();
  std::string line = "{\"event\":\"state\",\"state\":\"" + std::string(stateName(m.state())) + "\",\"licensed\":" +
                     (m.isLicensed() ? "true" : "false") + ",\"origin\":\"" + originName(m.origin()) + "\",\"reason\":" +
                     json(plc::name(m.reason())) + ",\"settled\":" + (m.settled() ? "true" : "false") +
                     ",\"starts\":" + std::to_string(m.agentStarts()) + ",\"held_back\":" + std::to_string(m.agentStartsHeldBack()) +
                     ",\"last_status\":" + std::to_string(static_cast<int>(last.status)) + ",\"last_origin\":\"" + originName(last.origin) + "\"";
  if (last.license) {
    line += ",\"source\":" + std::to_string(static_cast<int>(last.license->source)) + ",\"code_hint\":" + json(last.license->codeHint) +
            ",\"grace_until\":" + json(last.license->graceUntil) + ",\"grace_until_s\":" + std::to_string(last.license->graceUntilSeconds);
  }
  if (tUs >= 0) line += ",\"t_us\":" + std::to_string(tUs);
  return line + "}";
}

int load(int argc, char **argv) {
  if (argc < 4) return 64;
  plc::MonitorOptions options;
  if (!parseOptions(argc, argv, 4, options)) return 64;
  const int instances = std::max(1, std::atoi(argv[3]));
  std::vector<std::unique_ptr<plc::Monitor>> monitors;
  std::vector<long long> ctorNs;
  int licensed = 0, unlicensed = 0;
  std::string states;
  for (int i = 0; i < instances; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    monitors.push_back(std::make_unique<plc::Monitor>(argv[2], options));
    // The first audio block: one read, no waiting.
    const bool first = monitors.back()->isLicensed();
    const auto t1 = std::chrono::steady_clock::now();
    ctorNs.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    (first ? licensed : unlicensed)++;
  }
  std::string line = "{\"event\":\"load\",\"instances\":" + std::to_string(instances) + ",\"licensed_first_read\":" + std::to_string(licensed) +
                     ",\"unlicensed_first_read\":" + std::to_string(unlicensed) + ",\"state\":\"" + stateName(monitors[0]->state()) +
                     "\",\"origin\":\"" + originName(monitors[0]->origin()) + "\",\"reason\":" + json(plc::name(monitors[0]->reason())) +
                     ",\"settled\":" + (monitors[0]->settled() ? "true" : "false") + ",\"connections\":" + std::to_string(plc::Monitor::connections()) +
                     ",\"load_ns\":[";
  for (std::size_t i = 0; i < ctorNs.size(); ++i) line += (i ? "," : "") + std::to_string(ctorNs[i]);
  std::printf("%s]}\n%s\n", line.c_str(), stateLine(*monitors[0]).c_str());
  std::fflush(stdout);
  return 0;
}

int follow(int argc, char **argv) {
  if (argc < 5) return 64;
  plc::MonitorOptions options;
  if (!parseOptions(argc, argv, 5, options)) return 64;
  std::signal(SIGTERM, onStop);
  std::signal(SIGINT, onStop);
  const int instances = std::max(1, std::atoi(argv[3]));
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoi(argv[4]));
  std::vector<std::unique_ptr<plc::Monitor>> monitors;
  const auto made = std::chrono::steady_clock::now();
  for (int i = 0; i < instances; ++i) monitors.push_back(std::make_unique<plc::Monitor>(argv[2], options));
  long long samples = 0, unlicensed = 0, unlicensedAfterLicensed = 0, disagreements = 0;
  bool everLicensed = false;
  std::string previous;
  // The audio threads' reads, 1 ms apart, bounded by DURATION_MS.
  while (!stopRequested && std::chrono::steady_clock::now() < until) {
    const bool licensed = monitors[0]->isLicensed();
    for (auto &m : monitors) disagreements += m->isLicensed() != licensed;
    ++samples;
    if (licensed) everLicensed = true;
    else {
      ++unlicensed;
      if (everLicensed) ++unlicensedAfterLicensed;
    }
    const std::string key = std::string(stateName(monitors[0]->state())) + (licensed ? "1" : "0") + originName(monitors[0]->origin()) +
                            plc::name(monitors[0]->reason()) + std::to_string(monitors[0]->agentStarts()) + "/" +
                            std::to_string(monitors[0]->agentStartsHeldBack()) + (monitors[0]->settled() ? "s" : "");
    if (key != previous) {
      const long long tUs = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - made).count();
      std::printf("%s\n", stateLine(*monitors[0], tUs).c_str());
      std::fflush(stdout);
      previous = key;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("{\"event\":\"done\",\"samples\":%lld,\"unlicensed\":%lld,\"unlicensed_after_licensed\":%lld,\"disagreements\":%lld}\n", samples,
              unlicensed, unlicensedAfterLicensed, disagreements);
  std::fflush(stdout);
  return 0;
}

// The policy and isLicensed()'s rule on words made by hand: what a musician hears after N seconds
// of unknown, without waiting N seconds.
int policy() {
  using plc::State;
  using plc::detail::licensedBy;
  using plc::detail::packWord;
  const plc::UnknownPolicy def = plc::MonitorOptions{}.unknown;
  const plc::UnknownPolicy keep = plc::UnknownPolicy::keepPlaying();
  auto list = [](auto f) {
    std::string s = "[";
    for (std::uint32_t sec = 0; sec <= 7; ++sec) s += (sec ? "," : "") + std::string(f(sec) ? "true" : "false");
    return s + "]";
  };
  std::printf("{\"event\":\"policy\",\"default_unknown\":%s,\"keep_unknown\":%s,\"default_after_invalid\":%s,\"default_unsettled\":%s,"
              "\"ticket_valid\":%s,\"ticket_invalid\":%s}\n",
              list([&](std::uint32_t s) { return licensedBy(packWord(State::unknown, State::unknown, plc::Reason::none, s), def); }).c_str(),
              list([&](std::uint32_t s) { return licensedBy(packWord(State::unknown, State::valid, plc::Reason::none, s), keep); }).c_str(),
              list([&](std::uint32_t s) { return licensedBy(packWord(State::unknown, State::invalid, plc::Reason::none, s), def); }).c_str(),
              list([&](std::uint32_t s) { return licensedBy(packWord(State::unknown, State::unknown, plc::Reason::none, s, false), keep); }).c_str(),
              licensedBy(packWord(State::valid, State::valid, plc::Reason::none, 0, true, plc::Origin::ticket), def) ? "true" : "false",
              licensedBy(packWord(State::invalid, State::invalid, plc::Reason::graceExpired, 0, true, plc::Origin::ticket), keep) ? "true" : "false");
  return 0;
}

#ifndef _WIN32
// Processes whose parent is this one (zombies included).
int children() {
  int n = 0;
  const std::string self = std::to_string(getpid());
  DIR *d = opendir("/proc");
  if (d == nullptr) return -1;
  while (dirent *e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = std::fopen(path, "r");
    if (f == nullptr) continue;
    const std::size_t got = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[got] = '\0';
    // pid (comm) state ppid: comm may hold spaces, so read after the last ')'.
    const char *close = std::strrchr(buf, ')');
    char state = 0;
    int ppid = 0;
    if (close != nullptr && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2 && std::to_string(ppid) == self) ++n;
  }
  closedir(d);
  return n;
}
#endif

// A descriptor as a DAW leaves them: no close-on-exec, a high number (-1 on Windows).
int markedDescriptor() {
#ifndef _WIN32
  const int raw = open("/dev/null", O_RDONLY);
  const int marker = raw < 0 ? -1 : fcntl(raw, F_DUPFD, 300);
  if (raw >= 0) close(raw);
  return marker;
#else
  return -1;
#endif
}

int start(int argc, char **argv) {
  if (argc != 4) return 64;
  const int marker = markedDescriptor();
  const plc_status st = plc_start_agent(argv[2], argv[3]);
  int kids = 0;
#ifndef _WIN32
  kids = children();
#endif
  std::printf("{\"status\":%s,\"code\":%d,\"marker_fd\":%d,\"children\":%d,\"pid\":%d}\n", json(plc_strerror(st)).c_str(), static_cast<int>(st), marker,
              kids, static_cast<int>(getpid()));
  return st == PLC_OK ? 0 : 1;
}

int program(int argc, char **argv) {
  if (argc < 3) return 64;
  const int marker = markedDescriptor();
  std::vector<const char *> args(argv + 2, argv + argc);
  args.push_back(nullptr);
  int error = 0;
  std::string output;
  int kids = 0;
#ifndef _WIN32
  intptr_t out = -1;
  const plc_status st = plc_start_program(args.data(), &out, &error);
  if (st == PLC_OK) {
    // Until the program closes its standard output (it exits), bounded.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
      pollfd pfd{static_cast<int>(out), POLLIN, 0};
      if (left <= 0 || poll(&pfd, 1, static_cast<int>(left)) <= 0) break;
      char buf[512];
      const ssize_t got = read(static_cast<int>(out), buf, sizeof buf);
      if (got <= 0) break;
      output.append(buf, static_cast<std::size_t>(got));
    }
    close(static_cast<int>(out));
  }
  kids = children();
#else
  const plc_status st = plc_start_program(args.data(), nullptr, &error);
#endif
  std::printf("{\"status\":%s,\"code\":%d,\"os_error\":%s,\"output\":%s,\"marker_fd\":%d,\"children\":%d}\n", json(plc_strerror(st)).c_str(),
              static_cast<int>(st), json(error != 0 ? std::strerror(error) : "").c_str(), json(output).c_str(), marker, kids);
  return st == PLC_OK ? 0 : 1;
}

int defaultExecutable(int argc, char **argv) {
  if (argc != 4) return 64;
  char path[1024];
  const plc_status st = plc_default_executable(argv[2], argv[3], path, sizeof path);
  // plc_strerror names no path; the caller knows it asked for the executable's.
  const std::string words = st == PLC_ERR_PATH_TOO_LONG ? std::string("the executable's path is too long: ") + plc_strerror(st) : plc_strerror(st);
  std::printf("{\"status\":%s,\"code\":%d,\"path\":%s}\n", json(words).c_str(), static_cast<int>(st), json(path).c_str());
  return st == PLC_OK ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  int code = 64;
  if (mode == "load") code = load(argc, argv);
  else if (mode == "follow") code = follow(argc, argv);
  else if (mode == "policy") code = policy();
  else if (mode == "start") code = start(argc, argv);
  else if (mode == "program") code = program(argc, argv);
  else if (mode == "default-executable") code = defaultExecutable(argc, argv);
  if (code == 64) {
    std::fprintf(stderr,
                 "usage: %s load PROJECT_ID INSTANCES [--policy keep|SECONDS] [--no-start] [--executable PATH] [--vendor NAME]\n"
                 "       %s follow PROJECT_ID INSTANCES DURATION_MS [options]\n"
                 "       %s policy | start EXECUTABLE APP | program EXECUTABLE [ARG...] | default-executable VENDOR NAME\n",
                 argv[0], argv[0], argv[0]);
  }
  return code;
}
