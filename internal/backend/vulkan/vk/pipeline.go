package vk

import (
	"runtime"
	"unsafe"
)

// Pipeline is a compute pipeline with its layout (push constants only: qd
// passes every argument by value or by device address) and shader module.
type Pipeline struct {
	Pipeline  uint64
	Layout    uint64
	Module    uint64
	PushBytes int
}

// CreatePipeline builds a compute pipeline from the SPIR-V words code,
// whose entry point is entry, with pushBytes bytes of push constants.
func (d *Device) CreatePipeline(code []uint32, entry string, pushBytes int) (*Pipeline, error) {
	p := &Pipeline{PushBytes: pushBytes}
	minfo := &ShaderModuleCreateInfo{
		SType:    StructureTypeShaderModuleCreateInfo,
		CodeSize: uintptr(4 * len(code)),
		PCode:    unsafe.Pointer(&code[0]),
	}
	_, err := callResult("vkCreateShaderModule", d.createShaderModule, d.Handle, uintptr(unsafe.Pointer(minfo)), 0, uintptr(unsafe.Pointer(&p.Module)))
	runtime.KeepAlive(code)
	if err != nil {
		return nil, err
	}
	linfo := &PipelineLayoutCreateInfo{SType: StructureTypePipelineLayoutCreateInfo}
	rng := &PushConstantRange{StageFlags: ShaderStageCompute, Size: uint32(pushBytes)}
	if pushBytes > 0 {
		linfo.PushConstantRangeCount = 1
		linfo.PPushConstantRanges = unsafe.Pointer(rng)
	}
	if _, err := callResult("vkCreatePipelineLayout", d.createPipelineLayout, d.Handle, uintptr(unsafe.Pointer(linfo)), 0, uintptr(unsafe.Pointer(&p.Layout))); err != nil {
		d.DestroyPipeline(p)
		return nil, err
	}
	name := append([]byte(entry), 0)
	cinfo := &ComputePipelineCreateInfo{
		SType: StructureTypeComputePipelineCreateInfo,
		Stage: PipelineShaderStageCreateInfo{
			SType:  StructureTypePipelineShaderStageCreateInfo,
			Stage:  ShaderStageCompute,
			Module: p.Module,
			PName:  unsafe.Pointer(&name[0]),
		},
		Layout:            p.Layout,
		BasePipelineIndex: -1,
	}
	_, err = callResult("vkCreateComputePipelines", d.createComputePipelines, d.Handle, 0, 1, uintptr(unsafe.Pointer(cinfo)), 0, uintptr(unsafe.Pointer(&p.Pipeline)))
	runtime.KeepAlive(name)
	if err != nil {
		d.DestroyPipeline(p)
		return nil, err
	}
	return p, nil
}

// DestroyPipeline destroys p's pipeline, layout and module. p must be idle.
func (d *Device) DestroyPipeline(p *Pipeline) {
	if p.Pipeline != 0 {
		call(d.destroyPipeline, d.Handle, uintptr(p.Pipeline), 0)
		p.Pipeline = 0
	}
	if p.Layout != 0 {
		call(d.destroyPipelineLayout, d.Handle, uintptr(p.Layout), 0)
		p.Layout = 0
	}
	if p.Module != 0 {
		call(d.destroyShaderModule, d.Handle, uintptr(p.Module), 0)
		p.Module = 0
	}
}
