// The Python module weft._weft (docs/PYTHON.md): what its binding files share. Vectors and
// quaternions cross as tuples (any sequence of 3 or 4 numbers is accepted: a list, a tuple, a NumPy
// row); arrays of them as NumPy arrays of shape (n, 3), (n, 4) or, for poses, (n, 7) =
// (px, py, pz, qx, qy, qz, qw). weft::Error becomes weft.Error, with its message unchanged.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/math.h"

namespace nb = nanobind;

static_assert(sizeof(weft::Vec3) == 3 * sizeof(float), "Vec3 is three packed floats");
static_assert(sizeof(weft::Quat) == 4 * sizeof(float), "Quat is four packed floats");
static_assert(sizeof(weft::Transform) == 7 * sizeof(float), "Transform is p then q, packed");

namespace weft::python {

/// Reads `count` numbers from a Python sequence; false (no exception) when it is not one.
bool readNumbers(PyObject* source, float* out, int count);

/// A float32 NumPy array (rows × columns) holding a copy of `data` (as an object, so that
/// properties may return it: their reference_internal policy does not apply to an owned array).
nb::object floatArray(const float* data, size_t rows, size_t columns);
template <class T>
nb::object floatArray(const std::vector<T>& values) {
  static_assert(sizeof(T) % sizeof(float) == 0);
  return floatArray(reinterpret_cast<const float*>(values.data()), values.size(),
                    sizeof(T) / sizeof(float));
}
/// An int32 NumPy array (rows × columns) holding a copy of `data`.
nb::object intArray(const int* data, size_t rows, size_t columns);
template <class T>
nb::object intArray(const std::vector<T>& values) {
  static_assert(sizeof(T) % sizeof(int) == 0);
  return intArray(reinterpret_cast<const int*>(values.data()), values.size(),
                  sizeof(T) / sizeof(int));
}

/// A (rows, columns) array from Python as a vector of T (T = `columns` packed Scalars: Vec3 from
/// floats, Int3 from ints): any array-like NumPy converts (dtype and layout); `what` names it in
/// the error for a wrong shape.
template <class Scalar>
using Rows = nb::ndarray<const Scalar, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using FloatRows = Rows<float>;
using IntRows = Rows<int>;
template <class T, class Scalar>
std::vector<T> rowsOf(const Rows<Scalar>& array, const char* what) {
  static_assert(sizeof(T) % sizeof(Scalar) == 0);
  constexpr size_t columns = sizeof(T) / sizeof(Scalar);
  if (array.shape(1) != columns)
    throw nb::value_error((std::string(what) + " must have shape (n, " + std::to_string(columns) +
                           "), not (" + std::to_string(array.shape(0)) + ", " +
                           std::to_string(array.shape(1)) + ")")
                              .c_str());
  std::vector<T> out(array.shape(0));
  std::memcpy(static_cast<void*>(out.data()), array.data(), out.size() * sizeof(T));
  return out;
}

/// Whether `name` is a field (a property) of the bound class `type`; the fields, comma-separated;
/// "Name(field=value, ...)" of an instance.
bool isField(nb::handle type, nb::handle name);
std::string fieldList(nb::handle type);
std::string dataRepr(nb::handle self);

/// Gives a bound plain-data class its constructor, keywords only (weft.TriangleMaterial(ke=500.0);
/// fields not given keep the C++ defaults, an unknown one is a TypeError that lists the fields),
/// and a repr that shows every field. Each value goes through the field's own setter, so it is
/// checked and converted exactly as an assignment would be.
template <class T>
nb::class_<T> dataClass(nb::class_<T> cls) {
  cls.def(
      "__init__",
      [](T* self, nb::kwargs fields) {
        nb::object made = nb::cast(T{});
        for (auto [name, value] : fields) {
          if (!isField(made.type(), name))
            throw nb::type_error((nb::cast<std::string>(made.type().attr("__name__")) +
                                  " has no field '" + nb::cast<std::string>(name) +
                                  "' (fields: " + fieldList(made.type()) + ")")
                                     .c_str());
          nb::setattr(made, name, value);
        }
        new (self) T(nb::cast<const T&>(made));
      },
      "Keyword arguments set fields; the others keep their defaults.");
  cls.def("__repr__", [](nb::handle self) { return dataRepr(self); });
  return cls;
}

/// A scene option's value as weft run takes it: a string as given, a number as Python prints it,
/// a list or tuple joined with commas (spread over worlds).
std::string optionValue(nb::handle value);
/// A scene option's name: a str, else a TypeError naming the key.
std::string optionKey(nb::handle key);

void bindTypes(nb::module_& m);       // math, materials, shapes, motions, options
void bindBuilders(nb::module_& m);    // ClothBuilder, CableBuilder, the models, worlds
void bindSimulation(nb::module_& m);  // Device, Simulation, views, checks
void bindCommands(nb::module_& m);    // scenes, run_scene, bench, tune_launch, info

}  // namespace weft::python

// Vec3 and Quat as tuples.
namespace nanobind::detail {
template <>
struct type_caster<weft::Vec3> {
  NB_TYPE_CASTER(weft::Vec3, const_name("tuple[float, float, float]"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    return weft::python::readNumbers(src.ptr(), &value.x, 3);
  }
  static handle from_cpp(const weft::Vec3& v, rv_policy, cleanup_list*) noexcept {
    return Py_BuildValue("(fff)", v.x, v.y, v.z);
  }
};
template <>
struct type_caster<weft::Quat> {
  NB_TYPE_CASTER(weft::Quat, const_name("tuple[float, float, float, float]"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    return weft::python::readNumbers(src.ptr(), &value.x, 4);
  }
  static handle from_cpp(const weft::Quat& q, rv_policy, cleanup_list*) noexcept {
    return Py_BuildValue("(ffff)", q.x, q.y, q.z, q.w);
  }
};
}  // namespace nanobind::detail
