// Parse SDF files with the real libsdformat and print what it understood, one JSON object per file.
//
//   sdf_check <models dir> <file.sdf> ...   (model://<name> resolves to <models dir>/<name>)
//
// Strict: warnings, unrecognised elements and deprecated elements are errors (the parser's
// EnforcementPolicy::ERR), so a file gz sim would load with complaints fails here. For each model (the
// file's own, or each one a world includes) it prints every link's pose resolved in the model frame,
// every joint's type, links, axis and limits, and every plugin's filename, name and child elements;
// tests/foundation/test_sdf_libsdformat.py compares them with the MJCF. Exit status 1 when any file has
// errors.
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include <sdf/sdf.hh>

namespace {

std::string Quote(const std::string &_text) {
  std::string out = "\"";
  for (char c : _text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Number(double _value) {
  if (!std::isfinite(_value)) return _value > 0 ? "1e308" : "-1e308";
  std::ostringstream s;
  s.precision(17);
  s << _value;
  return s.str();
}

std::string Pose(const ignition::math::Pose3d &_pose) {
  const auto &p = _pose.Pos();
  const auto &q = _pose.Rot();
  return "[" + Number(p.X()) + "," + Number(p.Y()) + "," + Number(p.Z()) + "," + Number(q.W()) + "," +
         Number(q.X()) + "," + Number(q.Y()) + "," + Number(q.Z()) + "]";
}

std::string JointType(sdf::JointType _type) {
  switch (_type) {
    case sdf::JointType::REVOLUTE: return "revolute";
    case sdf::JointType::FIXED: return "fixed";
    case sdf::JointType::PRISMATIC: return "prismatic";
    case sdf::JointType::CONTINUOUS: return "continuous";
    default: return "other";
  }
}

// The plugins of an element (a model or a world), with their child elements' text.
std::string Plugins(const sdf::ElementPtr &_parent) {
  std::string out = "[";
  bool first = true;
  for (auto plugin = _parent->GetFirstElement(); plugin; plugin = plugin->GetNextElement()) {
    if (plugin->GetName() != "plugin") continue;
    out += first ? "" : ",";
    first = false;
    out += "{\"filename\":" + Quote(plugin->GetAttribute("filename")->GetAsString()) +
           ",\"name\":" + Quote(plugin->GetAttribute("name")->GetAsString()) + ",\"elements\":{";
    bool firstChild = true;
    for (auto child = plugin->GetFirstElement(); child; child = child->GetNextElement()) {
      const auto value = child->GetValue();
      out += firstChild ? "" : ",";
      firstChild = false;
      out += Quote(child->GetName()) + ":" + Quote(value ? value->GetAsString() : "");
    }
    out += "}}";
  }
  return out + "]";
}

std::string Model(const sdf::Model &_model, const std::string &_poseInWorld) {
  std::string out = "{\"name\":" + Quote(_model.Name()) + ",\"pose\":" + _poseInWorld +
                    ",\"canonical_link\":" + Quote(_model.CanonicalLinkName()) + ",\"links\":{";
  for (uint64_t i = 0; i < _model.LinkCount(); ++i) {
    const sdf::Link *link = _model.LinkByIndex(i);
    ignition::math::Pose3d pose;
    sdf::Errors errors = link->SemanticPose().Resolve(pose, "__model__");
    out += (i ? "," : "") + Quote(link->Name()) + ":{\"pose\":" + (errors.empty() ? Pose(pose) : "null") +
           ",\"mass\":" + Number(link->Inertial().MassMatrix().Mass()) + "}";
  }
  out += "},\"joints\":{";
  for (uint64_t i = 0; i < _model.JointCount(); ++i) {
    const sdf::Joint *joint = _model.JointByIndex(i);
    out += (i ? "," : "") + Quote(joint->Name()) + ":{\"type\":" + Quote(JointType(joint->Type())) +
           ",\"parent\":" + Quote(joint->ParentLinkName()) + ",\"child\":" + Quote(joint->ChildLinkName());
    if (const sdf::JointAxis *axis = joint->Axis(0)) {
      ignition::math::Vector3d xyz;
      axis->ResolveXyz(xyz, joint->ChildLinkName());
      out += ",\"axis_in_child\":[" + Number(xyz.X()) + "," + Number(xyz.Y()) + "," + Number(xyz.Z()) + "]" +
             ",\"lower\":" + Number(axis->Lower()) + ",\"upper\":" + Number(axis->Upper()) +
             ",\"effort\":" + Number(axis->Effort()) + ",\"velocity\":" + Number(axis->MaxVelocity());
    }
    out += "}";
  }
  return out + "},\"plugins\":" + Plugins(_model.Element()) + "}";
}

}  // namespace

int main(int _argc, char **_argv) {
  if (_argc < 3) {
    std::cerr << "usage: sdf_check <models dir> <file.sdf> ...\n";
    return 2;
  }
  sdf::ParserConfig config;
  config.SetWarningsPolicy(sdf::EnforcementPolicy::ERR);
  config.SetUnrecognizedElementsPolicy(sdf::EnforcementPolicy::ERR);
  config.SetDeprecatedElementsPolicy(sdf::EnforcementPolicy::ERR);
  config.AddURIPath("model://", _argv[1]);
  int failed = 0;
  for (int i = 2; i < _argc; ++i) {
    sdf::Root root;
    sdf::Errors errors = root.Load(_argv[i], config);
    // The version the file declares (a newer one than this parser's is read as its own, with a console error).
    const std::string declared = root.Element() ? root.Element()->OriginalVersion() : "";
    std::string out = "{\"file\":" + Quote(_argv[i]) + ",\"version\":" + Quote(root.Version()) +
                      ",\"declared_version\":" + Quote(declared) + ",\"parser_version\":" + Quote(SDF_VERSION) +
                      ",\"errors\":[";
    for (size_t e = 0; e < errors.size(); ++e) {
      std::ostringstream message;
      message << errors[e];
      out += (e ? "," : "") + Quote(message.str());
    }
    out += "],\"models\":[";
    bool first = true;
    if (const sdf::Model *model = root.Model()) {
      out += Model(*model, "null");
      first = false;
    }
    std::string worlds = "[";
    for (uint64_t w = 0; w < root.WorldCount(); ++w) {
      const sdf::World *world = root.WorldByIndex(w);
      for (uint64_t m = 0; m < world->ModelCount(); ++m) {
        const sdf::Model *model = world->ModelByIndex(m);
        ignition::math::Pose3d pose;
        sdf::Errors poseErrors = model->SemanticPose().Resolve(pose, "world");
        out += (first ? "" : ",") + Model(*model, poseErrors.empty() ? Pose(pose) : "null");
        first = false;
      }
      worlds += (w ? "," : "") + std::string("{\"name\":") + Quote(world->Name()) +
                ",\"gravity\":[" + Number(world->Gravity().X()) + "," + Number(world->Gravity().Y()) + "," +
                Number(world->Gravity().Z()) + "],\"plugins\":" + Plugins(world->Element()) + "}";
    }
    out += "],\"worlds\":" + worlds + "]}";
    std::cout << out << std::endl;
    failed += errors.empty() ? 0 : 1;
  }
  return failed ? 1 : 0;
}
