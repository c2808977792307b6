package vk

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// DescriptorKind is the kind of one shader binding.
type DescriptorKind int

const (
	// StorageBuffer is an SSBO (VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).
	StorageBuffer DescriptorKind = iota
	// StorageTexelBuffer is an imageBuffer over a buffer view.
	StorageTexelBuffer
)

func (k DescriptorKind) vk() vk.DescriptorType {
	if k == StorageTexelBuffer {
		return vk.DescriptorTypeStorageTexelBuffer
	}
	return vk.DescriptorTypeStorageBuffer
}

// PipelineDesc describes a compute pipeline.
type PipelineDesc struct {
	Name     string           // for errors
	SPIRV    []byte           // the module; entry point "main"
	Bindings []DescriptorKind // set 0, bindings 0..n-1
	PushSize uint32           // bytes of push constants, a multiple of 4
	Spec     []uint32         // specialization constants by constant_id 0..n-1
}

// Pipeline is a compute pipeline with its layouts.
type Pipeline struct {
	d        *Device
	desc     PipelineDesc
	setl     vk.DescriptorSetLayout
	layout   vk.PipelineLayout
	pipeline vk.Pipeline
	c        C.vkops_pipe // the handles again, for recording in one call
}

// PipelineCache is a VkPipelineCache.
type PipelineCache struct {
	d *Device
	h vk.PipelineCache
}

// NewPipelineCache creates a cache primed with data from an earlier run
// (nil for none). The driver checks data's header against the device and
// ignores data that does not match.
func (d *Device) NewPipelineCache(data []byte) (*PipelineCache, error) {
	var pinner runtime.Pinner
	defer pinner.Unpin()
	ci := &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo}
	if len(data) > 0 {
		pin(&pinner, &data[0])
		ci.InitialDataSize = uint(len(data))
		ci.PInitialData = unsafe.Pointer(&data[0])
	}
	var h vk.PipelineCache
	r := vk.CreatePipelineCache(d.h, ci, nil, &h)
	ci.Free()
	if r != vk.Success && len(data) > 0 {
		return d.NewPipelineCache(nil)
	}
	if err := check("vkCreatePipelineCache", r); err != nil {
		return nil, err
	}
	d.live.Add(1)
	return &PipelineCache{d: d, h: h}, nil
}

// Data returns the cache's contents for saving.
func (c *PipelineCache) Data() ([]byte, error) {
	var n uint
	if err := check("vkGetPipelineCacheData", vk.GetPipelineCacheData(c.d.h, c.h, &n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	var pinner runtime.Pinner
	defer pinner.Unpin()
	pin(&pinner, &buf[0])
	if err := check("vkGetPipelineCacheData", vk.GetPipelineCacheData(c.d.h, c.h, &n, unsafe.Pointer(&buf[0]))); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// Destroy destroys the cache.
func (c *PipelineCache) Destroy() {
	if c == nil || c.h == nil {
		return
	}
	vk.DestroyPipelineCache(c.d.h, c.h, nil)
	c.h = nil
	c.d.live.Add(-1)
}

// NewPipeline builds a compute pipeline; cache may be nil.
func (d *Device) NewPipeline(cache *PipelineCache, desc PipelineDesc) (*Pipeline, error) {
	if len(desc.SPIRV) == 0 || len(desc.SPIRV)%4 != 0 {
		return nil, fmt.Errorf("vk: pipeline %s: SPIR-V of %d bytes", desc.Name, len(desc.SPIRV))
	}
	if len(desc.Bindings) > MaxSetBindings {
		return nil, fmt.Errorf("vk: pipeline %s: %d bindings (at most %d)", desc.Name, len(desc.Bindings), MaxSetBindings)
	}
	p := &Pipeline{d: d, desc: desc}
	if err := p.build(cache); err != nil {
		p.Destroy()
		return nil, fmt.Errorf("vk: pipeline %s: %w", desc.Name, err)
	}
	return p, nil
}

// build creates p's objects in turn; where one fails, the caller's
// Destroy frees those made before it.
func (p *Pipeline) build(cache *PipelineCache) error {
	if err := p.createSetLayout(); err != nil {
		return err
	}
	if err := p.createLayout(); err != nil {
		return err
	}
	module, err := p.createModule()
	if err != nil {
		return err
	}
	defer vk.DestroyShaderModule(p.d.h, module, nil)
	if err := p.createPipeline(cache, module); err != nil {
		return err
	}
	p.c = C.vkops_pipe{
		pipeline:   C.VkPipeline(unsafe.Pointer(p.pipeline)),
		layout:     C.VkPipelineLayout(unsafe.Pointer(p.layout)),
		set_layout: C.VkDescriptorSetLayout(unsafe.Pointer(p.setl)),
		nbinds:     C.uint32_t(len(p.desc.Bindings)),
		push_size:  C.uint32_t(p.desc.PushSize),
		push_desc:  cbool(p.d.pushDesc),
	}
	for i, k := range p.desc.Bindings {
		p.c.types[i] = C.VkDescriptorType(k.vk())
	}
	return nil
}

// createSetLayout creates p.setl, the layout of p's descriptor set: one
// binding of each of p.desc.Bindings, pushed where the device can.
func (p *Pipeline) createSetLayout() error {
	d := p.d
	var pinner runtime.Pinner
	defer pinner.Unpin()
	binds := make([]vk.DescriptorSetLayoutBinding, len(p.desc.Bindings))
	for i, k := range p.desc.Bindings {
		binds[i] = vk.DescriptorSetLayoutBinding{
			Binding:         uint32(i),
			DescriptorType:  k.vk(),
			DescriptorCount: 1,
			StageFlags:      vk.ShaderStageFlags(vk.ShaderStageComputeBit),
		}
	}
	if len(binds) > 0 {
		pin(&pinner, &binds[0])
	}
	lci := &vk.DescriptorSetLayoutCreateInfo{
		SType:        vk.StructureTypeDescriptorSetLayoutCreateInfo,
		BindingCount: uint32(len(binds)),
		PBindings:    binds,
	}
	if d.pushDesc {
		lci.Flags = vk.DescriptorSetLayoutCreateFlags(C.VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR)
	}
	var setl vk.DescriptorSetLayout
	r := vk.CreateDescriptorSetLayout(d.h, lci, nil, &setl)
	lci.Free()
	if err := check("vkCreateDescriptorSetLayout", r); err != nil {
		return err
	}
	p.setl = setl
	d.live.Add(1)
	return nil
}

// createLayout creates p.layout, the pipeline layout of p.setl and
// p.desc.PushSize bytes of push constants.
func (p *Pipeline) createLayout() error {
	d := p.d
	var pinner runtime.Pinner
	defer pinner.Unpin()
	setls := []vk.DescriptorSetLayout{p.setl}
	pin(&pinner, &setls[0])
	pci := &vk.PipelineLayoutCreateInfo{
		SType:          vk.StructureTypePipelineLayoutCreateInfo,
		SetLayoutCount: 1,
		PSetLayouts:    setls,
	}
	if p.desc.PushSize > 0 {
		ranges := []vk.PushConstantRange{{
			StageFlags: vk.ShaderStageFlags(vk.ShaderStageComputeBit),
			Size:       p.desc.PushSize,
		}}
		pin(&pinner, &ranges[0])
		pci.PushConstantRangeCount = 1
		pci.PPushConstantRanges = ranges
	}
	var layout vk.PipelineLayout
	r := vk.CreatePipelineLayout(d.h, pci, nil, &layout)
	pci.Free()
	if err := check("vkCreatePipelineLayout", r); err != nil {
		return err
	}
	p.layout = layout
	d.live.Add(1)
	return nil
}

// createModule creates a shader module of p.desc.SPIRV, for the caller
// to destroy once the pipeline is built.
func (p *Pipeline) createModule() (vk.ShaderModule, error) {
	var pinner runtime.Pinner
	defer pinner.Unpin()
	code := make([]uint32, len(p.desc.SPIRV)/4)
	for i := range code {
		code[i] = binary.LittleEndian.Uint32(p.desc.SPIRV[4*i:])
	}
	pin(&pinner, &code[0])
	mci := &vk.ShaderModuleCreateInfo{
		SType:    vk.StructureTypeShaderModuleCreateInfo,
		CodeSize: uint(len(p.desc.SPIRV)),
		PCode:    code,
	}
	var module vk.ShaderModule
	r := vk.CreateShaderModule(p.d.h, mci, nil, &module)
	mci.Free()
	return module, check("vkCreateShaderModule", r)
}

// createPipeline creates p.pipeline from module with p.desc.Spec's
// specialization constants, through cache where it is not nil.
func (p *Pipeline) createPipeline(cache *PipelineCache, module vk.ShaderModule) error {
	d := p.d
	var spec *C.uint32_t
	if len(p.desc.Spec) > 0 {
		spec = (*C.uint32_t)(unsafe.Pointer(&p.desc.Spec[0]))
	}
	var pc C.VkPipelineCache
	if cache != nil {
		pc = C.VkPipelineCache(unsafe.Pointer(cache.h))
	}
	var pipe C.VkPipeline
	r := vk.Result(C.vkops_create_compute_pipeline(&d.fns, C.VkDevice(unsafe.Pointer(d.h)), pc,
		C.VkShaderModule(unsafe.Pointer(module)), C.VkPipelineLayout(unsafe.Pointer(p.layout)),
		spec, C.uint32_t(len(p.desc.Spec)), &pipe))
	if err := check("vkCreateComputePipelines", r); err != nil {
		return err
	}
	p.pipeline = vk.Pipeline(unsafe.Pointer(pipe))
	d.live.Add(1)
	return nil
}

// Desc returns what the pipeline was built from.
func (p *Pipeline) Desc() *PipelineDesc { return &p.desc }

// Destroy destroys the pipeline and its layouts.
func (p *Pipeline) Destroy() {
	d := p.d
	if p.pipeline != nil {
		vk.DestroyPipeline(d.h, p.pipeline, nil)
		p.pipeline = nil
		d.live.Add(-1)
	}
	if p.layout != nil {
		vk.DestroyPipelineLayout(d.h, p.layout, nil)
		p.layout = nil
		d.live.Add(-1)
	}
	if p.setl != nil {
		vk.DestroyDescriptorSetLayout(d.h, p.setl, nil)
		p.setl = nil
		d.live.Add(-1)
	}
}
