#include "solver/energy.h"

#include "kernels/bending.h"
#include "kernels/membrane.h"

namespace weft {

ClothEnergy clothEnergy(const ModelDesc& desc, std::span<const Vec3> x, std::span<const Vec3> v,
                        const Vec3& gravity) {
  ClothEnergy e;
  for (int i = 0; i < desc.numParticles(); ++i) {
    const double m = desc.masses[i];
    e.kinetic += 0.5 * m * double(lengthSquared(v[i]));
    e.gravity -=
        m * (double(gravity.x) * x[i].x + double(gravity.y) * x[i].y + double(gravity.z) * x[i].z);
  }
  for (int t = 0; t < desc.numTriangles(); ++t) {
    const Int3 tri = desc.triangles[t];
    const TriangleMaterial& m = desc.triangleMaterials[t];
    if (m.ke <= 0.0f && m.ka <= 0.0f) continue;
    e.membrane += membraneEnergy(x[tri.x], x[tri.y], x[tri.z], desc.triangleRestInverse[t],
                                 desc.triangleRestAreas[t], m.ke, m.ka);
  }
  for (int k = 0; k < desc.numEdges(); ++k) {
    const Int4 s = desc.edges[k];
    if (s.x < 0 || s.y < 0 || desc.edgeMaterials[k].ke <= 0.0f) continue;
    e.bending += bendingEnergy(x[s.x], x[s.y], x[s.z], x[s.w], desc.edgeRestAngles[k],
                               desc.edgeRestLengths[k], desc.edgeMaterials[k].ke);
  }
  return e;
}

}  // namespace weft
