// The producer's loads of an im2col tile (T.c2d_im2col, ir/im2col.h) by TMA
// in im2col mode: one load per panel of the tile's columns (and per 16-row
// chunk where the gemm form's A is stored in chunks), each at the first
// pixel of its rows and the filter tap of its columns.
//
// Rows m0 .. m0 + rows - 1 of the im2col matrix are output pixels: the
// load starts at pixel m0 = (n, oh, ow), whose filter window's top-left
// corner is (oh SH - PH, ow SW - PW) in image n, and the tensor map walks
// on through the following pixels (TensorMapSpec::im2col). Columns k0 ..
// k0 + cols - 1 lie in one tap (kh, kw) (C is a multiple of cols), channels
// k0 % C onward: the load's im2col offsets (kw DW, kh DH) shift every pixel
// to that tap.
#include "compiler/backends/c_names.h"
#include "compiler/backends/cuda/cuda_kernel_emitter.h"

namespace tlc::cuda {

using namespace ir;

void KernelEmitter::emitIm2colLoads(size_t i, const std::string& stage) {
  const HopperMainloop& h = *hopper_;
  const HopperOperand& op = h.tiles[i];
  const ir::Im2colMatch& m = *op.im2col;
  const ir::Im2colGeometry& g = m.geometry;
  LocationScope at(*this, m.loc);
  auto lit = [](int64_t v) { return makeInt(v, DType::Int32); };
  const Expr &H = m.x->shape[1], &W = m.x->shape[2], &C = m.x->shape[3];
  Expr OW = im2colOutputExtent(W, g, 1), pixels = mul(im2colOutputExtent(H, g, 0), OW);
  // The filter tap and first channel of the tile's columns.
  const std::string tap = fresh("tap"), chan = fresh("chan");
  Expr k0 = mul(m.cStep, lit(m.cols));
  line("const int " + tap + " = " + expr(floorDiv(k0, C)) + ";");
  line("const int " + chan + " = " + expr(floorMod(k0, C)) + ";");
  const std::string offW = "(unsigned short)(" + tap + " % " + std::to_string(g.kernel[1]) + " * " +
                           std::to_string(g.dilation[1]) + ")";
  const std::string offH = "(unsigned short)(" + tap + " / " + std::to_string(g.kernel[1]) + " * " +
                           std::to_string(g.dilation[0]) + ")";
  const int64_t panelElems = op.span / dtypeBytes(op.tile->dtype);
  // The gemm form's A: 16-row chunks go where their wgmma reads them (HopperMainloop::slices).
  const int64_t chunks = i == 0 && h.gemm && h.slices > 1 ? op.rows / 16 : 1;
  for (int64_t q = 0; q < chunks; ++q) {
    int64_t w = q / h.slices, a = q % h.slices;
    int64_t physical = chunks > 1 ? ((w / 4 * h.slices + a) * 4 + w % 4) * 16 : 0;
    // The chunk's first pixel and the top-left corner of its filter window.
    Var first = makeVar("pixel");
    markNonNegative(first);
    line("const int " + varName(first) + " = " + expr(add(mul(m.nhwStep, lit(m.rows)), lit(q * 16))) + ";");
    Expr pix = makeVarRef(first);
    Expr within = floorMod(pix, pixels);
    std::string n = expr(floorDiv(pix, pixels));
    std::string y = expr(sub(mul(floorDiv(within, OW), lit(g.stride[0])), lit(g.pad[0])));
    std::string x = expr(sub(mul(floorMod(within, OW), lit(g.stride[1])), lit(g.pad[1])));
    for (int64_t p = 0; p < op.panels; ++p)
      line("tlc::tma_load_im2col_4d(" + hopperTile(op, stage) + " + " +
           std::to_string(p * op.rows * panelElems + physical * panelElems) + ", &" + tmapName_[i] + ", &tlc_full[" +
           stage + "], " + chan + (p ? " + " + std::to_string(p * panelElems) : "") + ", " + x + ", " + y + ", " + n +
           ", " + offW + ", " + offH + ");");
  }
}

}  // namespace tlc::cuda
