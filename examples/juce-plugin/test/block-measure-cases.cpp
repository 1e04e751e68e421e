// Prints what block_measure says of a table of plugin outputs (one JSON line per case), for
// test/block-measure.test.ts: the console host's words checked on effects other than a gate.
#include "block-measure.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

namespace {

constexpr int kBlock = 480;
constexpr double kPi = 3.14159265358979323846;

// The host's input: 0.5 x a 440 Hz sine at 48 kHz, from sample `start` on.
float input(long start, int i) {
  return 0.5f * static_cast<float>(std::sin(2.0 * kPi * 440.0 * static_cast<double>(start + i) / 48000.0));
}

void show(const char *name, const std::function<float(const float *in, int i)> &effect, long start = 48000) {
  std::vector<float> in(kBlock), out(kBlock);
  for (int i = 0; i < kBlock; ++i) in[i] = input(start, i);
  for (int i = 0; i < kBlock; ++i) out[i] = effect(in.data(), i);
  const block_measure::Block b = block_measure::measure(out.data(), in.data(), kBlock);
  std::printf("{\"case\":\"%s\",\"state\":\"%s\",\"output\":\"%s\",\"level_db\":%s,\"monotonic\":%s}\n", name, b.state, b.output,
              block_measure::decibels(b.peak).c_str(), b.monotonic ? "true" : "false");
}

}  // namespace

int main() {
  const long start = 48000;
  show("pass-through", [](const float *in, int i) { return in[i]; });
  show("volume -6 dB", [](const float *in, int i) { return 0.5f * in[i]; });
  show("gate fading out", [](const float *in, int i) { return in[i] * (1.0f - static_cast<float>(i) / kBlock); });
  show("gate fading in halfway", [](const float *in, int i) { return in[i] * std::min(1.0f, static_cast<float>(i) / 240.0f); });
  // The probe's "Nebula Delay": the input 100 samples later (the past from the same sine), wet only, then with the dry signal.
  show("delay, wet", [start](const float *, int i) { return input(start - 100, i); });
  show("delay, dry + wet", [start](const float *in, int i) { return in[i] + 0.5f * input(start - 2000, i); });
  // 50 ms is 22 whole periods of 440 Hz: the echo is in phase, so the sum is the input times 1.5.
  show("delay of whole periods, dry + wet", [start](const float *in, int i) { return in[i] + 0.5f * input(start - 2400, i); });
  show("delay before its first echo", [](const float *, int) { return 0.0f; });
  show("silence", [](const float *, int) { return 0.0f; });
  show("noise at -130 dBFS", [](const float *, int i) { return (i % 2 ? 1 : -1) * 3.0e-7f; });
  show("noise at -110 dBFS", [](const float *, int i) { return (i % 2 ? 1 : -1) * 3.0e-6f; });
  show("not a number", [](const float *, int) { return std::numeric_limits<float>::quiet_NaN(); });
  show("phase inverted", [](const float *in, int i) { return -in[i]; });
  show("distortion", [](const float *in, int i) { return std::tanh(4.0f * in[i]); });
  show("DC offset", [](const float *in, int i) { return in[i] + 0.01f; });
  show("a synth ignoring its input", [start](const float *, int i) { return 0.3f * static_cast<float>(std::sin(2.0 * kPi * 1000.0 * (start + i) / 48000.0)); });
  show("full scale", [](const float *in, int i) { return 2.0f * in[i]; });
  return 0;
}
