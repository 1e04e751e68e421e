#include "PluginEditor.h"

ExampleEditor::ExampleEditor(ExampleProcessor &owner) : AudioProcessorEditor(owner), activation_(owner.license()) {
  addAndMakeVisible(activation_);
  setSize(activation_.getWidth(), activation_.getHeight());
}
