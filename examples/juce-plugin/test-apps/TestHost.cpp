// plugin-license-test-host: a console VST3 host, for the tests and for a vendor checking the audio
// of their own plugin. Loads a VST3 with JUCE's AudioPluginFormatManager (no display), makes
// INSTANCES instances in this one process, and runs processBlock on a 440 Hz test signal in real
// time (a block of 480 samples every 10 ms), as a DAW would. Prints JSON lines:
//
//   {"event":"loaded","instances":50,"name":"…","load_ms":12}
//   {"event":"audio","state":"plays|silent","output":"same|gain|fade|other|none","level_db":-6.0,"at_ms":<epoch ms>,"block":N,"agree":true}
//   {"event":"fade","from":1,"to":0,"samples":480,"monotonic":true,"max_step":0.0021}
//   {"event":"done","blocks":N,"plays":P,"silent":S,"same":A,"gain":G,"fade":F,"other":O,"first_plays":B,"first_silent":B}
//
// The words hold for any effect. `state` says whether the plugin makes sound: "silent" is a block
// whose every sample is below -120 dBFS (zero, or as good as), "plays" any other. `output` says
// how the sound relates to the input, for a gate or a volume: "same" (the input unchanged, a
// pass-through), "gain" (the input times a constant gain), "fade" (the input times a gain that
// moves smoothly from sample to sample), "other" (anything else: a delay, a filter, a distortion,
// a synth), "none" (silent). An "audio"
// line comes at the first block and whenever `state` or `output` changes; `level_db` is that
// block's peak (dBFS, null when silent). The words are block-measure.h's.
//
// "fade" is also a line of its own per such block: `monotonic` is true when the gain never turned
// back and `max_step` (the largest change between two samples) shows it had no jump: no click.
// "done" counts every instance's blocks (P + S = N x INSTANCES; A + G + F + O = P) and names the first
// block where any instance played and the first where any was silent (-1: none), so a test sees
// "never a sound" or "never silent" in one line.
//
//   plugin-license-test-host PLUGIN.vst3 [INSTANCES] [SECONDS] [--blocks N]
//   (stops after SECONDS, after N blocks, or at "quit" on stdin)
#include <JuceHeader.h>

#include "block-measure.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr double kSampleRate = 48000.0;
constexpr int kBlock = 480;
constexpr double kFrequency = 440.0;
constexpr float kAmplitude = 0.5f;

void emit(const juce::String &json) {
  std::printf("%s\n", json.toRawUTF8());
  std::fflush(stdout);
}

}  // namespace

constexpr const char *kUsage =
    "usage: plugin-license-test-host PLUGIN.vst3 [INSTANCES] [SECONDS] [--blocks N]\n"
    "\n"
    "Loads the VST3 INSTANCES times (default 1) in this process and runs processBlock on a 440 Hz\n"
    "signal in real time, printing JSON lines (loaded, audio, fade, done), for SECONDS (default 60),\n"
    "N blocks of 10 ms, or until a line \"quit\" arrives on standard input, whichever comes first.\n"
    "\"state\" is plays or silent (every sample below -120 dBFS), for any effect; \"output\" is same\n"
    "(the input unchanged), gain (times a constant gain), fade (times a moving gain), other (a delay,\n"
    "a filter...) or none.\n"
    "PLUGIN_LICENSE_SOCKET names the agent.\n"
    "\n"
    "  --blocks N   stop after N blocks (\"done\" counts them by what each instance played)\n"
    "  -h, --help   show this help\n";

namespace {

// The first block (of `blocks` so far) where `seen` became true, or -1.
void noteFirst(long long &first, bool seen, long long block) {
  if (seen && first < 0) first = block;
}

// A whole number for --blocks, INSTANCES: digits only, at least 1.
bool positive(const std::string &text, long long &out) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::atoll(text.c_str());
  return out >= 1;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> positional;
  long long maxBlocks = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--blocks") {
      if (i + 1 >= argc || !positive(argv[i + 1], maxBlocks)) {
        std::fprintf(stderr, "plugin-license-test-host: --blocks needs a whole number of blocks, at least 1\n");
        std::fputs(kUsage, stderr);
        return 64;
      }
      ++i;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "plugin-license-test-host: unknown option %s\n", a.c_str());
      std::fputs(kUsage, stderr);
      return 64;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.empty() || positional.size() > 3) {
    std::fputs(kUsage, stderr);
    return 64;
  }
  juce::ScopedJuceInitialiser_GUI juce;  // the message manager the plugin's classes expect
  const int instances = positional.size() >= 2 ? std::max(1, std::atoi(positional[1].c_str())) : 1;
  const double seconds = positional.size() >= 3 ? std::atof(positional[2].c_str()) : 60.0;
  const std::string pluginPath = positional[0];

  juce::AudioPluginFormatManager formats;
  formats.addFormat(new juce::VST3PluginFormat());
  juce::OwnedArray<juce::PluginDescription> found;
  juce::VST3PluginFormat vst3;
  vst3.findAllTypesForFile(found, juce::File::getCurrentWorkingDirectory().getChildFile(juce::String::fromUTF8(pluginPath.c_str())).getFullPathName());
  if (found.isEmpty()) {
    emit("{\"event\":\"error\",\"message\":\"no VST3 plugin in " + juce::String::fromUTF8(pluginPath.c_str()).replace("\"", "'") + "\"}");
    return 2;
  }

  const auto started = juce::Time::getMillisecondCounterHiRes();
  std::vector<std::unique_ptr<juce::AudioPluginInstance>> plugins;
  for (int i = 0; i < instances; ++i) {
    juce::String error;
    auto plugin = formats.createPluginInstance(*found[0], kSampleRate, kBlock, error);
    if (plugin == nullptr) {
      emit("{\"event\":\"error\",\"message\":\"" + error.replace("\"", "'") + "\"}");
      return 2;
    }
    plugin->setPlayConfigDetails(2, 2, kSampleRate, kBlock);
    plugin->prepareToPlay(kSampleRate, kBlock);
    plugins.push_back(std::move(plugin));
  }
  emit("{\"event\":\"loaded\",\"instances\":" + juce::String(instances) + ",\"name\":\"" + found[0]->name + "\",\"load_ms\":" +
       juce::String(juce::roundToInt(juce::Time::getMillisecondCounterHiRes() - started)) + "}");

  std::atomic<bool> quit{false};
  std::thread input([&quit] {
    // Only "quit" stops early: a closed stdin means nobody sends commands.
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == "quit") {
        quit = true;
        break;
      }
    }
  });
  input.detach();

  juce::AudioBuffer<float> in(2, kBlock), buffer(2, kBlock);
  juce::MidiBuffer midi;
  std::string previous;
  long long block = 0;
  long long plays = 0, silent = 0, same = 0, gains = 0, fades = 0, other = 0, firstPlays = -1, firstSilent = -1;
  double phase = 0;
  const double until = juce::Time::getMillisecondCounterHiRes() + seconds * 1000.0;
  double next = juce::Time::getMillisecondCounterHiRes();
  while (!quit && juce::Time::getMillisecondCounterHiRes() < until && (maxBlocks < 0 || block < maxBlocks)) {
    for (int i = 0; i < kBlock; ++i) {
      const float x = kAmplitude * static_cast<float>(std::sin(phase));
      phase += 2.0 * juce::MathConstants<double>::pi * kFrequency / kSampleRate;
      in.setSample(0, i, x);
      in.setSample(1, i, x);
    }
    block_measure::Block first;
    bool agree = true;
    for (std::size_t p = 0; p < plugins.size(); ++p) {
      buffer.makeCopyOf(in, true);
      plugins[p]->processBlock(buffer, midi);
      const block_measure::Block b = block_measure::measure(buffer.getReadPointer(0), in.getReadPointer(0), kBlock);
      if (p == 0) first = b;
      else agree = agree && std::string(b.state) == first.state && std::string(b.output) == first.output;
      const std::string state = b.state, output = b.output;
      plays += state == "plays" ? 1 : 0;
      silent += state == "silent" ? 1 : 0;
      same += output == "same" ? 1 : 0;
      gains += output == "gain" ? 1 : 0;
      fades += output == "fade" ? 1 : 0;
      other += output == "other" ? 1 : 0;
      noteFirst(firstPlays, state == "plays", block);
      noteFirst(firstSilent, state == "silent", block);
    }
    const std::string now = std::string(first.state) + "/" + first.output;
    if (now != previous) {
      emit(juce::String("{\"event\":\"audio\",\"state\":\"") + first.state + "\",\"output\":\"" + first.output + "\",\"level_db\":" + juce::String(block_measure::decibels(first.peak)) +
           ",\"at_ms\":" + juce::String(juce::Time::currentTimeMillis()) + ",\"block\":" + juce::String(block) + ",\"agree\":" + (agree ? "true" : "false") + "}");
      previous = now;
    }
    if (std::string(first.output) == "fade") {
      emit("{\"event\":\"fade\",\"from\":" + juce::String(first.from, 4) + ",\"to\":" + juce::String(first.to, 4) + ",\"samples\":" +
           juce::String(first.samples) + ",\"monotonic\":" + (first.monotonic ? "true" : "false") + ",\"max_step\":" + juce::String(first.maxStep, 6) + "}");
    }
    ++block;
    next += 1000.0 * kBlock / kSampleRate;
    const double wait = next - juce::Time::getMillisecondCounterHiRes();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(wait * 1000.0)));
  }
  for (auto &p : plugins) p->releaseResources();
  plugins.clear();
  emit("{\"event\":\"done\",\"blocks\":" + juce::String(block) + ",\"plays\":" + juce::String(plays) + ",\"silent\":" + juce::String(silent) +
       ",\"same\":" + juce::String(same) + ",\"gain\":" + juce::String(gains) + ",\"fade\":" + juce::String(fades) + ",\"other\":" + juce::String(other) +
       ",\"first_plays\":" + juce::String(firstPlays) + ",\"first_silent\":" + juce::String(firstSilent) + "}");
  return 0;
}
